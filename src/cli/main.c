/* main.c - parse the options, run one command, turn the result into an exit status. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/snapdiff.h"

/* A full disk or a closed pipe must not pass for success. */
static int finish_stdout(int status)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (errno != EPIPE) msg_error("error writing output: %s", strerror(errno));
        return EXIT_TROUBLE;
    }
    return status;
}

static int run(const struct cli_opts *opts);

int main(int argc, char **argv)
{
    struct cli_opts opts;
    char errbuf[256] = "";
    int status = EXIT_TROUBLE;
    switch (cli_parse(argc, argv, &opts, errbuf, sizeof errbuf)) {
    case OPT_HELP:
        cli_print_help(stdout, opts.command);
        status = finish_stdout(EXIT_OK);
        break;
    case OPT_VERSION:
        printf("snapdiff %s\n", sd_version());
        status = finish_stdout(EXIT_OK);
        break;
    case OPT_ERROR:
        msg_error("%s", errbuf);
        fprintf(stderr, "Try 'snapdiff --help' for more information.\n");
        break;
    case OPT_OK: status = run(&opts); break;
    }
    cli_opts_release(&opts);
    return status;
}

/* One command, through the registry (commands.c), its result turned into the exit status. */
static int run(const struct cli_opts *opts)
{
    msg_set_quiet(opts->quiet);
    cli_run_fn *fn = cli_command_run(opts->command);
    return finish_stdout(fn ? fn(opts, stdout) : EXIT_TROUBLE);
}
