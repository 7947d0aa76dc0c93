/**
 * commands.h - the subcommands of the mieb-eval program and its exit statuses.
 *
 * Each command describes its options in one table, which mieb_cli_parse reads its arguments
 * by (cli_options.h), opens with mieb_cli_start (cli_start.h: --help, usage errors, logging)
 * and returns an exit status; only main() exits.
 */
#ifndef MIEB_CLI_COMMANDS_H
#define MIEB_CLI_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Documented exit statuses (README "Exit status"). */
enum mieb_exit {
    MIEB_EXIT_OK = 0,          /* every requested task was scored */
    MIEB_EXIT_TASK_FAILED = 1, /* at least one task had invalid or missing inputs; others were scored */
    MIEB_EXIT_USAGE = 2,       /* bad command line */
    MIEB_EXIT_NO_DEVICE = 3,   /* --device cuda and no usable GPU */
    MIEB_EXIT_FATAL = 4,       /* could not run at all (unreadable registry, output not writable, ...) */
    MIEB_EXIT_PREEMPTED = 75,  /* SIGUSR1 (Slurm's --signal before the time limit): rerun the same command to resume */
    MIEB_EXIT_INTERRUPTED = 130,
};

/** Strict number parsing (cli_args.c): the whole of s is a base-10 integer in [lo, hi]. */
bool mieb_cli_parse_i64(const char *s, long long lo, long long hi, long long *out);

/*
 * Option values, checked before anything runs. Each returns true and stores the value, or
 * prints one line "mieb-eval <cmd>: bad <opt> '<val>' (<what is expected>)" on stderr and
 * returns false; the command then exits MIEB_EXIT_USAGE.
 */
void mieb_cli_bad_value(const char *cmd, const char *opt, const char *val, const char *expected);
/** A base-10 integer in [lo, hi] (mieb_cli_parse_i64). */
bool mieb_cli_int(const char *cmd, const char *opt, const char *val, long long lo, long long hi, long long *out);
/** A size: a finite decimal number with an optional K/M/G/T suffix (powers of 1024; "KiB",
    "MB" also read), at least min bytes (min 0: at least 1) and at most SIZE_MAX. */
bool mieb_cli_size(const char *cmd, const char *opt, const char *val, size_t min, size_t *out);
/** Strict real parsing: the whole of s is a finite non-negative decimal number (no sign, nan, inf, hex or
    leading blanks, which strtod takes) in [lo, hi]. */
bool mieb_cli_parse_real(const char *s, double lo, double hi, double *out);
/** A real as mieb_cli_parse_real reads it. */
bool mieb_cli_real(const char *cmd, const char *opt, const char *val, double lo, double hi, double *out);
/** The paired bootstrap's --alpha (compare, report --per-query): a number strictly between 0
    and 1, into the double *field (an option check, cli_options.h). Its --resamples is a whole
    number from 1 to 10^7, its --seed one from 0 to 2^32-1 (MIEB_CLI_RESAMPLES_MAX, ..._SEED_MAX). */
bool mieb_cli_alpha(const char *cmd, const char *opt, const char *val, void *field);
#define MIEB_CLI_RESAMPLES_MAX 10000000LL
#define MIEB_CLI_SEED_MAX 4294967295LL
/** One of the NULL-terminated choices; *idx its index. */
bool mieb_cli_choice(const char *cmd, const char *opt, const char *val, const char *const *choices, int *idx);
/**
 * No word of the command line (argv[1..argc-1], argv[0] the command) holds a control
 * character (core/escape.h: C0, DEL, C1, line separators, bidirectional controls): a path
 * ending in a newline would create a folder of that name and split every line that shows
 * it. Otherwise one line names the option (or "argument") and shows the value escaped, and
 * false is returned: the command exits MIEB_EXIT_USAGE before anything runs.
 */
bool mieb_cli_refuse_controls(const char *cmd, int argc, char **argv);
/** A path: not empty. */
bool mieb_cli_path(const char *cmd, const char *opt, const char *val);
/** An input folder: not empty, and an existing folder. */
bool mieb_cli_dir(const char *cmd, const char *opt, const char *val);
/** An output folder (or an input folder whose absence the command reports itself): not
    empty, and a folder where it exists already. */
bool mieb_cli_out_dir(const char *cmd, const char *opt, const char *val);

struct mieb_cli_spec;

/**
 * The spellings users know (cli_style.c): "--opt=value" becomes "--opt" "value"; the
 * underscores of a long option's name become hyphens (mteb's --output_folder,
 * --model_revision, --eval_splits); and a list option of the command's table (spec; NULL:
 * none, cli_options.h: mieb_cli_takes_list, such as run's -t/--tasks, --task-types,
 * --eval-splits, -l/--languages) takes its names as words, as a comma-separated list, or
 * both, handed to the command the way its table reads that list. argv[cmd_index] is the
 * command; arguments after "--" pass unchanged. Returns a new NULL-terminated argv (one
 * malloc'd block: free it), or NULL when out of memory.
 */
char **mieb_cli_normalize(int argc, char **argv, int cmd_index, const struct mieb_cli_spec *spec, int *out_argc);

/* The commands (cli_commands.h lists them): each one's main, argv[0] the command, and the
   table of its command line (cli_options.h; run's is run_options.h's mieb_run_spec). */
int mieb_cmd_run(int argc, char **argv);   /* mieb-eval run ...   (cmd_run.c) */
int mieb_cmd_synth(int argc, char **argv); /* mieb-eval synth ... (cmd_synth.c) */
int mieb_cmd_list_tasks(int argc, char **argv); /* mieb-eval list-tasks ... (cmd_list.c) */
int mieb_cmd_inspect(int argc, char **argv);    /* mieb-eval inspect ...    (cmd_inspect.c) */
int mieb_cmd_summary(int argc, char **argv);    /* mieb-eval summary ...    (cmd_summary.c) */
int mieb_cmd_merge(int argc, char **argv);      /* mieb-eval merge ...      (cmd_merge.c) */
int mieb_cmd_report(int argc, char **argv);     /* mieb-eval report ...     (cmd_report.c) */
int mieb_cmd_compare(int argc, char **argv);    /* mieb-eval compare ...    (cmd_compare.c) */
int mieb_cmd_parity(int argc, char **argv);     /* mieb-eval parity ...     (cmd_parity.c) */
extern const struct mieb_cli_spec mieb_synth_spec, mieb_list_tasks_spec, mieb_inspect_spec, mieb_summary_spec,
    mieb_merge_spec, mieb_report_spec, mieb_compare_spec, mieb_parity_spec;

#endif
