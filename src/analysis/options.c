/* options.c - the _init() of each options struct the analyses take (common.h: structs
 * that can grow), from its _INIT template. */
#include "base/base.h"
#include "snapdiff/attrib.h"
#include "snapdiff/curve.h"
#include "snapdiff/diff.h"
#include "snapdiff/frag.h"
#include "snapdiff/peak.h"
#include "snapdiff/profile.h"
#include "snapdiff/report_data.h"
#include "snapdiff/series.h"
#include "snapdiff/trace.h"

sd_status sd_attrib_options_init(sd_attrib_options *opts, unsigned version)
{
    static const sd_attrib_options tmpl = SD_ATTRIB_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_ATTRIB_OPTIONS_VERSION);
}

sd_status sd_curve_limits_init(sd_curve_limits *opts, unsigned version)
{
    static const sd_curve_limits tmpl = SD_CURVE_LIMITS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_CURVE_LIMITS_VERSION);
}

sd_status sd_curve_options_init(sd_curve_options *opts, unsigned version)
{
    static const sd_curve_options tmpl = SD_CURVE_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_CURVE_OPTIONS_VERSION);
}

sd_status sd_diff_options_init(sd_diff_options *opts, unsigned version)
{
    static const sd_diff_options tmpl = SD_DIFF_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_DIFF_OPTIONS_VERSION);
}

sd_status sd_frag_options_init(sd_frag_options *opts, unsigned version)
{
    static const sd_frag_options tmpl = SD_FRAG_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_FRAG_OPTIONS_VERSION);
}

sd_status sd_peak_options_init(sd_peak_options *opts, unsigned version)
{
    static const sd_peak_options tmpl = SD_PEAK_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_PEAK_OPTIONS_VERSION);
}

sd_status sd_profile_options_init(sd_profile_options *opts, unsigned version)
{
    static const sd_profile_options tmpl = SD_PROFILE_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_PROFILE_OPTIONS_VERSION);
}

sd_status sd_series_options_init(sd_series_options *opts, unsigned version)
{
    static const sd_series_options tmpl = SD_SERIES_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_SERIES_OPTIONS_VERSION);
}

sd_status sd_trace_options_init(sd_trace_options *opts, unsigned version)
{
    static const sd_trace_options tmpl = SD_TRACE_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_TRACE_OPTIONS_VERSION);
}

sd_status sd_report_data_options_init(sd_report_data_options *opts, unsigned version)
{
    static const sd_report_data_options tmpl = SD_REPORT_DATA_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_REPORT_DATA_OPTIONS_VERSION);
}
