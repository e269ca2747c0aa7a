/* options.c - the _init() of each options struct and input the renderers take
 * (common.h: structs that can grow), from its _INIT template. */
#include "base/base.h"
#include "snapdiff/render.h"
#include "snapdiff/render_check.h"
#include "snapdiff/render_diff.h"
#include "snapdiff/render_report.h"
#include "snapdiff/render_series.h"
#include "snapdiff/render_top.h"
#include "snapdiff/render_trace.h"

sd_status sd_render_options_init(sd_render_options *opts, unsigned version)
{
    static const sd_render_options tmpl = SD_RENDER_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_RENDER_OPTIONS_VERSION);
}

sd_status sd_check_report_init(sd_check_report *opts, unsigned version)
{
    static const sd_check_report tmpl = SD_CHECK_REPORT_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_CHECK_REPORT_VERSION);
}

sd_status sd_diff_text_options_init(sd_diff_text_options *opts, unsigned version)
{
    static const sd_diff_text_options tmpl = SD_DIFF_TEXT_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_DIFF_TEXT_OPTIONS_VERSION);
}

sd_status sd_report_input_init(sd_report_input *opts, unsigned version)
{
    static const sd_report_input tmpl = SD_REPORT_INPUT_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_REPORT_INPUT_VERSION);
}

sd_status sd_series_text_options_init(sd_series_text_options *opts, unsigned version)
{
    static const sd_series_text_options tmpl = SD_SERIES_TEXT_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_SERIES_TEXT_OPTIONS_VERSION);
}

sd_status sd_top_text_options_init(sd_top_text_options *opts, unsigned version)
{
    static const sd_top_text_options tmpl = SD_TOP_TEXT_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_TOP_TEXT_OPTIONS_VERSION);
}

sd_status sd_trace_text_options_init(sd_trace_text_options *opts, unsigned version)
{
    static const sd_trace_text_options tmpl = SD_TRACE_TEXT_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_TRACE_TEXT_OPTIONS_VERSION);
}
