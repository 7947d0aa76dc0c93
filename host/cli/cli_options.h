/**
 * cli_options.h - a command's options as one table (cli_options.c walks it).
 *
 * Each command describes its options once, in a table of struct mieb_cli_opt: the names, the
 * kind of value, where the value goes in the command's options struct (offsetof), the default
 * and the help lines. The one parser reads a command line against the table, checks each value
 * with the checker of its kind (commands.h: mieb_cli_int, mieb_cli_size, ...) and stores it,
 * and answers a mistyped long option with the table's closest name ("did you mean"); the
 * command's --help (and so docs/CLI.md) prints the help lines in table order. What is left
 * to a command is what a table cannot say: options that go together or exclude each other,
 * read once the whole line is parsed.
 *
 *     static const struct mieb_cli_opt opts[] = {
 *         {"--dim", .kind = MIEB_OPT_INT, .at = offsetof(struct my_opts, dim), .width = sizeof(int),
 *          .lo = 1, .hi = 65536, .def = "32", .help = "  --dim D   embedding dimension (default 32)\n"},
 *         {0}};
 */
#ifndef MIEB_CLI_OPTIONS_H
#define MIEB_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "progress.h"

/** What a command's parser found on its command line. */
enum mieb_cli_parsed {
    MIEB_CLI_GO,       /* a good command line: the command runs */
    MIEB_CLI_HELP,     /* -h or --help: the help on stdout, exit status 0 */
    MIEB_CLI_BAD,      /* a usage error, said on stderr; the synopsis line and the --help hint follow */
    MIEB_CLI_BAD_SAID, /* a usage error said in full on stderr (a bad value, named): nothing follows */
};

/** -v/--verbose, -q/--quiet and --log-format, for the commands that log (run, merge). */
struct mieb_cli_log {
    bool verbose, quiet;
    enum mieb_log_format format;
};

/** -h or --help. */
bool mieb_cli_is_help(const char *arg);

/** What an option takes, and so how its value is checked and stored. */
enum mieb_opt_kind {
    MIEB_OPT_FLAG,    /* no value: the bool field becomes true */
    MIEB_OPT_STRING,  /* a word (with `empty` set, not an empty one): the const char * field points at it */
    MIEB_OPT_PATH,    /* a path (mieb_cli_path: not empty): const char * */
    MIEB_OPT_IN_DIR,  /* an existing folder (mieb_cli_dir): const char * */
    MIEB_OPT_OUT_DIR, /* a folder or nothing yet (mieb_cli_out_dir): const char * */
    MIEB_OPT_INT,     /* a whole number in [lo, hi] (mieb_cli_int): an int, long or long long field */
    MIEB_OPT_SIZE,    /* a size of at least lo bytes (mieb_cli_size): size_t */
    MIEB_OPT_REAL,    /* a number in [lo, hi] (mieb_cli_real): double */
    MIEB_OPT_CHOICE,  /* one of choices (mieb_cli_choice): its index in an int field, or with
                         MIEB_OPT_AS_STRING the choice itself in a const char * field */
    MIEB_OPT_LIST,    /* the words up to the next option (mteb's nargs="+"): appended to the
                         const char *[cap] field, their count in the int at count_at; a list
                         option, whose comma-separated words main splits (cli_style.c) */
    MIEB_OPT_EACH,    /* one word per use of the option (-b A -b B), appended as for LIST */
    MIEB_OPT_CHECK,   /* a value the command's own check reads and stores */
};

/** Flags of an option (an or of them). */
enum {
    MIEB_OPT_AS_STRING = 1,  /* CHOICE: store the choice's text, not its index */
    MIEB_OPT_NEED_ONE = 2,   /* LIST: at least one word must follow */
    MIEB_OPT_OF_TASKS = 4,   /* LIST: the words are task names (the messages say so) */
    MIEB_OPT_MARK_GIVEN = 8, /* set the bool at given_at when the option is on the command line */
    MIEB_OPT_JOINED = 16,    /* STRING: a list option read as one comma-separated word; main joins
                                the words given up to the next option with commas (cli_style.c) */
};

/**
 * A command's own check of a value (MIEB_OPT_CHECK): true after storing what val says in
 * *field (the options struct at the option's offset), false after one line on stderr
 * saying what is wrong (mieb_cli_bad_value).
 */
typedef bool (*mieb_opt_check_fn)(const char *cmd, const char *opt, const char *val, void *field);

/** One option. A table ends with an entry whose name is NULL. */
struct mieb_cli_opt {
    const char *name;  /* "--tasks" (or a short option alone) */
    const char *short_name; /* "-t"; NULL if none */
    const char *mteb;  /* mteb's spelling where it is another word ("--benchmarks"); NULL if none.
                          Underscores need none: main reads --output_folder as --output-folder */
    enum mieb_opt_kind kind;
    size_t at;          /* offsetof the field in the command's options struct */
    size_t width;       /* INT: sizeof the field (int, long, long long) */
    long long lo, hi;   /* INT: the range; SIZE: lo is the least size */
    double rlo, rhi;    /* REAL: the range */
    const char *const *choices; /* CHOICE: NULL-terminated */
    size_t count_at;    /* LIST, EACH: offsetof the int count */
    int cap;            /* LIST, EACH: the array's length; a word past it is refused */
    const char *empty;  /* STRING, LIST: when not NULL, an empty word is refused as not being this
                           ("a language"): it would select nothing, or everything */
    mieb_opt_check_fn check; /* CHECK */
    int flags;
    size_t given_at;    /* MIEB_OPT_MARK_GIVEN: offsetof the bool set when given */
    const char *def;    /* the default, read as a value of the option before the command line; NULL: zero */
    const char *help;   /* the --help lines that describe it, whole lines; NULL: described with another */
};

/**
 * A command's command line: its name, its options, its help around them, and how the command
 * has always answered a usage error (kept as it is, so a command line means what it did).
 */
struct mieb_cli_spec {
    const char *name;               /* "run" */
    const struct mieb_cli_opt *opts;
    size_t size;                    /* sizeof the options struct: zeroed, then the defaults */
    const char *head, *tail;        /* the help before and after the options' lines */
    const char *unknown;            /* "option" or "argument": "unknown option '--x'" */
    enum mieb_cli_parsed missing;   /* after "--x needs a value": BAD (synopsis follows) or BAD_SAID */
    enum mieb_cli_parsed bad_value; /* after "bad --x 'v' (...)": BAD or BAD_SAID */
    bool value_first;               /* an unknown last word is said to need a value (synth, merge) */
    /* the words that are not options (result folders ...): GO, or BAD/BAD_SAID after saying
       why; NULL: such a word is an unknown option */
    enum mieb_cli_parsed (*positional)(const char *cmd, const char *word, void *opts);
};

/** --log-format's values, in enum mieb_log_format order. */
extern const char *const mieb_cli_log_formats[];

/**
 * The entries of -v/--verbose, -q/--quiet and --log-format text|json, for the commands that log
 * (run, merge): AT is the offset of their struct mieb_cli_log (cli_start.h), HV, HQ and HF the
 * help lines of each (NULL: none of its own).
 */
#define MIEB_CLI_LOG_OPTS(AT, HV, HQ, HF)                                                                         \
    {"--verbose", "-v", .kind = MIEB_OPT_FLAG, .at = (AT) + offsetof(struct mieb_cli_log, verbose), .help = HV}, \
        {"--quiet", "-q", .kind = MIEB_OPT_FLAG, .at = (AT) + offsetof(struct mieb_cli_log, quiet), .help = HQ}, \
        {"--log-format", .kind = MIEB_OPT_CHOICE, .at = (AT) + offsetof(struct mieb_cli_log, format),            \
         .choices = mieb_cli_log_formats, .help = HF}

/** The table's option spelled a (its name, short name or mteb's spelling), or NULL. */
const struct mieb_cli_opt *mieb_cli_find(const struct mieb_cli_opt *opts, const char *a);

/** A list option: MIEB_OPT_LIST, or a string of MIEB_OPT_JOINED words. main hands the words up
    to the next option, and the comma-separated names in them, to the command as it reads them
    (cli_style.c), and the top-level --help names every command's list options. */
bool mieb_cli_takes_list(const struct mieb_cli_opt *opt);

/**
 * The command line (argv[0] the command) into opts, by the spec's table: GO, HELP at -h or
 * --help, or BAD/BAD_SAID after the message on stderr. opts is zeroed and given the table's
 * defaults first. The command checks the combinations afterwards.
 */
enum mieb_cli_parsed mieb_cli_parse(const struct mieb_cli_spec *spec, int argc, char **argv, void *opts);

/** The command's --help: head, each option's help lines in table order, tail. */
void mieb_cli_help(const struct mieb_cli_spec *spec, FILE *f);

#endif
