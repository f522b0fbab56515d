/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The UCX_TC_* table. It is the documentation: `twochains-info -c` prints
 * it, and it is registered with UCX so that `LD_PRELOAD=libtwochains.so
 * ucx_info -cf` shows it too.
 *
 * Threads: tc_config_read may be called from any thread; it keeps no state.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include <twochains/config.h>
#include <twochains/lane.h>

#include <ucs/sys/preprocessor.h>
#include <ucs/config/parser.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

const char *tc_wait_policy_names[] = {
    [TC_WAIT_BUSY]  = "busy",
    [TC_WAIT_PAUSE] = "pause",
    [TC_WAIT_WFE]   = "wfe",
    [TC_WAIT_SLEEP] = "sleep",
    [TC_WAIT_ADAPTIVE] = "adaptive",
    [TC_WAIT_LAST]  = NULL
};

static ucs_config_field_t tc_config_table[] = {
    {"WAIT_POLICY", "adaptive",
     "How an idle progress loop waits for the next remote store:\n"
     " adaptive - spin (umwait/WFE where the CPU has it, else pause) for at most\n"
     "            SPIN_TIME of an idle streak, and not at all while the process\n"
     "            has as many spinning engine threads as cores it may run on,\n"
     "            nor while the machine has more runnable tasks than cores and\n"
     "            this thread waits for a CPU (a niced neighbour does not count);\n"
     "            then yield, then the sleep backoff. Right when a core is\n"
     "            yours and when threads outnumber cores\n"
     " busy     - spin on loads\n"
     " pause    - spin with x86 pause / Arm yield\n"
     " wfe      - Arm WFE on the watched line; x86 umwait with WAITPKG; else pause\n"
     " sleep    - bounded exponential backoff from the first idle step",
     ucs_offsetof(tc_config_t, wait_policy),
     UCS_CONFIG_TYPE_ENUM(tc_wait_policy_names)},

    {"SPIN_TIME", "50us",
     "adaptive: how long an idle streak may spin before it yields the core.",
     ucs_offsetof(tc_config_t, spin_time), UCS_CONFIG_TYPE_TIME},

    {"SLEEP_MIN", "1us",
     "First sleep of the sleep policy's backoff.",
     ucs_offsetof(tc_config_t, sleep_min), UCS_CONFIG_TYPE_TIME},

    {"SLEEP_MAX", "500us",
     "Longest sleep of the sleep policy's backoff: an upper bound on the\n"
     "wake-up delay it adds.",
     ucs_offsetof(tc_config_t, sleep_max), UCS_CONFIG_TYPE_TIME},

    {"MAX_POLLERS", "1024",
     "Pollers one progress engine can hold. Every group (shard) on a node is\n"
     "one; the loop visits only slots up to the highest ever used.",
     ucs_offsetof(tc_config_t, max_pollers), UCS_CONFIG_TYPE_UINT},

    {"BOOTSTRAP", "auto",
     "Bootstrap backend: auto (pmix when a PMIx launcher such as mpirun set\n"
     "PMIX_RANK and UCX_TC_SIZE is not set, else tcp when UCX_TC_SIZE > 1, else\n"
     "single), tcp, pmix, or single (one member).",
     ucs_offsetof(tc_config_t, bootstrap), UCS_CONFIG_TYPE_STRING},

    {"ROOT", "",
     "host:port where rank 0 of the TCP bootstrap listens (set by twochains-run).",
     ucs_offsetof(tc_config_t, root), UCS_CONFIG_TYPE_STRING},

    {"RANK", "-1",
     "This process's rank in the bootstrap (set by twochains-run).",
     ucs_offsetof(tc_config_t, rank), UCS_CONFIG_TYPE_INT},

    {"SIZE", "0",
     "Number of processes in the bootstrap (set by twochains-run).",
     ucs_offsetof(tc_config_t, size), UCS_CONFIG_TYPE_INT},

    {"LISTEN_FD", "-1",
     "A listening socket rank 0 inherits from twochains-run, so that no\n"
     "port has to be guessed.",
     ucs_offsetof(tc_config_t, listen_fd), UCS_CONFIG_TYPE_INT},

    {"BOOTSTRAP_TIMEOUT", "30s",
     "Longest any bootstrap step (connect, allgather, barrier) may take\n"
     "before it fails with a timeout.",
     ucs_offsetof(tc_config_t, boot_timeout), UCS_CONFIG_TYPE_TIME},

    {"WRITE_LANE", "auto",
     "How a write into a peer's registered region travels:\n"
     " auto - ucp_put_nbx where UCP has an RMA lane to the peer (posix, sysv,\n"
     "        cma; rc, dc on InfiniBand), else one eager active message whose\n"
     "        handler stores the bytes (tcp in UCX 1.13, where UCP emulates\n"
     "        puts and its emulation aborts the receiver of a put from a peer\n"
     "        that dies)\n"
     " rma  - always ucp_put_nbx, emulated or not\n"
     " am   - always the active message",
     ucs_offsetof(tc_config_t, write_lane),
     UCS_CONFIG_TYPE_ENUM(tc_write_lane_mode_names)},

    {"JOB_KEY", "",
     "The secret every process of the job shares (at least 16 bytes). With it,\n"
     "the TCP bootstrap and a group's join service admit only peers that answer\n"
     "a fresh challenge with its HMAC-SHA256, and may listen on any address.\n"
     "Without it (and without JOB_KEY_FILE) they listen on loopback only.\n"
     "Printed as <hidden>.",
     ucs_offsetof(tc_config_t, job_key), UCS_CONFIG_TYPE_STRING},

    {"JOB_KEY_FILE", "",
     "A file holding the job key instead of JOB_KEY: a regular file of this\n"
     "user that no one else may read or write (chmod 600).",
     ucs_offsetof(tc_config_t, job_key_file), UCS_CONFIG_TYPE_STRING},

    {"HANDSHAKE_MAX", "1024",
     "The TCP bootstrap's root and a group's join service run this many\n"
     "handshakes at once; past it, the oldest one not yet authenticated is\n"
     "dropped for the newcomer.",
     ucs_offsetof(tc_config_t, handshake_max), UCS_CONFIG_TYPE_UINT},

    {"HANDSHAKE_MAX_PER_SOURCE", "128",
     "Of those, at most this many from one source address; past it, that\n"
     "address's oldest handshake is dropped.",
     ucs_offsetof(tc_config_t, handshake_max_per_source), UCS_CONFIG_TYPE_UINT},

    {NULL}
};

UCS_CONFIG_REGISTER_TABLE(tc_config_table, "Two-Chains", TC_CONFIG_TABLE_PREFIX,
                          tc_config_t, &ucs_config_global_list)

ucs_status_t tc_config_read(tc_config_t *config)
{
    return ucs_config_parser_fill_opts(config, tc_config_table,
                                       TC_CONFIG_ENV_PREFIX,
                                       TC_CONFIG_TABLE_PREFIX, 0);
}

void tc_config_release(tc_config_t *config)
{
    ucs_config_parser_release_opts(config, tc_config_table);
}

/* The job key is a secret: print whether it is set, never what it is. */
static void tc_config_print_table(FILE *stream, ucs_config_global_list_entry_t *entry,
                                  void *opts, ucs_config_print_flags_t flags)
{
    tc_config_t *config = opts;
    char *key           = NULL;
    static char hidden[] = "<hidden>";

    if ((entry->table == tc_config_table) && (config->job_key[0] != '\0')) {
        key             = config->job_key;
        config->job_key = hidden;
    }
    ucs_config_parser_print_opts(stream, entry->name, opts, entry->table, entry->prefix,
                                 TC_CONFIG_ENV_PREFIX, flags);
    if (key != NULL) {
        config->job_key = key;
    }
}

/* Every UCX_TC_* table registered in this process (the base table here, and
 * those of the ifunc runtime and the replication layer when loaded), printed
 * the way ucx_info -c prints UCX's own. */
void tc_config_print(FILE *stream, int with_doc)
{
    ucs_config_print_flags_t flags = UCS_CONFIG_PRINT_CONFIG;
    ucs_config_global_list_entry_t *entry;
    void *opts;

    if (with_doc) {
        flags |= UCS_CONFIG_PRINT_DOC | UCS_CONFIG_PRINT_HEADER;
    }
    ucs_list_for_each(entry, &ucs_config_global_list, list) {
        if ((entry->prefix == NULL) || (entry->table == NULL) ||
            strncmp(entry->prefix, TC_CONFIG_TABLE_PREFIX,
                    strlen(TC_CONFIG_TABLE_PREFIX)) != 0) {
            continue;
        }
        opts = calloc(1, entry->size);
        if (opts == NULL) {
            return;
        }
        if (ucs_config_parser_fill_opts(opts, entry->table, TC_CONFIG_ENV_PREFIX,
                                        entry->prefix, 0) == UCS_OK) {
            tc_config_print_table(stream, entry, opts, flags);
            ucs_config_parser_release_opts(opts, entry->table);
        }
        free(opts);
    }
}

/* Parse the table once at load time. UCX warns about UCX_ variables that no
 * parsed table has used, and an application may call ucp_init() before it
 * creates any of our objects. The table is registered before this runs:
 * constructors of one file run in order. */
UCS_STATIC_INIT
{
    tc_config_t config;

    if (tc_config_read(&config) == UCS_OK) {
        tc_config_release(&config);
    }
}
