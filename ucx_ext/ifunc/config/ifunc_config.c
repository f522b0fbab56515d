/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * UCX_TC_IFUNC_*: the Two-Chains runtime's configuration table, parsed by
 * UCX's own parser and registered with UCX, so that
 * `LD_PRELOAD=libtwochains.so ucx_info -cf` lists it. It is a table of its
 * own (prefix TC_IFUNC_) because tc_config_t, the main table's struct, is a
 * public type of another module.
 *
 * Threads: tc_ifunc_config_get reads the environment once (pthread_once).
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "ifunc/config/ifunc_config.h"

#include <ucs/sys/string.h>

#include <ucs/debug/log_def.h>

#include <twochains/config.h>

#include <ucs/sys/preprocessor.h>
#include <ucs/config/parser.h>
#include <pthread.h>
#include <stddef.h>

#define TC_IFUNC_CONFIG_PREFIX "TC_IFUNC_"

const char *tc_ifunc_security_names[] = {
    [TC_IFUNC_SECURITY_LOCAL_ONLY] = "local-only",
    [TC_IFUNC_SECURITY_VERIFY]     = "verify",
    [TC_IFUNC_SECURITY_TRUST]      = "trust",
    [TC_IFUNC_SECURITY_CONFINE]    = "confine",
    [TC_IFUNC_SECURITY_LAST]       = NULL
};

const char *tc_ifunc_placement_names[] = {
    [TC_IFUNC_PLACEMENT_COPY]    = "copy",
    [TC_IFUNC_PLACEMENT_INPLACE] = "inplace",
    [TC_IFUNC_PLACEMENT_LAST]    = NULL
};

const char *tc_ifunc_signal_names[] = {
    [TC_IFUNC_SIGNAL_FENCE]   = "fence",
    [TC_IFUNC_SIGNAL_TRAILER] = "trailer",
    [TC_IFUNC_SIGNAL_CHECK]   = "check",
    [TC_IFUNC_SIGNAL_LAST]    = NULL
};

const char *tc_ifunc_mode_names[] = {
    [TC_IFUNC_MODE_LOCAL]    = "local",
    [TC_IFUNC_MODE_INJECTED] = "injected",
    [TC_IFUNC_MODE_CACHED]   = "cached",
    [TC_IFUNC_MODE_PORTABLE] = "portable",
    [TC_IFUNC_MODE_PORTABLE_CACHED] = "portable-cached",
    [TC_IFUNC_MODE_LAST]     = NULL
};

const char *tc_ifunc_public_code_names[] = {
    [TC_IFUNC_PUBLIC_CODE_INJECTED] = "injected",
    [TC_IFUNC_PUBLIC_CODE_PORTABLE] = "portable",
    [TC_IFUNC_PUBLIC_CODE_LAST]     = NULL
};

static ucs_config_field_t tc_ifunc_config_table[] = {
    {"SECURITY", "verify",
     "Which frames a receiver runs:\n"
     " local-only - Local frames only; injected and cached code is rejected\n"
     " verify     - injected code must equal (hash and bytes) the installed element\n"
     " trust      - any code from a connected peer (the paper's mode); code of a\n"
     "              package not installed here is linked from the symbol names\n"
     "              its first frame carries (dlsym over the process and rieds)\n"
     " confine    - as verify for our own packages' code; a Portable module we do\n"
     "              not have is checked (no indirect call, assembly or call off\n"
     "              the allow-list), rewritten so that every access stays in its\n"
     "              payload, its target's declared size, a group's state and its\n"
     "              own stack, with fuel (UCX_TC_IFUNC_CONFINE_*), then run",
     ucs_offsetof(tc_ifunc_config_t, security),
     UCS_CONFIG_TYPE_ENUM(tc_ifunc_security_names)},

    {"PLACEMENT", "copy",
     "Where injected code runs:\n"
     " copy    - copied into a read+execute code cache (W^X), deduplicated\n"
     " inplace - in the mailbox slot, which is mapped read+write+execute (the\n"
     "           paper's compact mode). Its sender can still write the slot, so\n"
     "           what runs need not be what was checked: allowed only with\n"
     "           UCX_TC_IFUNC_SECURITY=trust, refused at creation otherwise",
     ucs_offsetof(tc_ifunc_config_t, placement),
     UCS_CONFIG_TYPE_ENUM(tc_ifunc_placement_names)},

    {"SIGNAL", "check",
     "How a receiver knows that a frame in its mailbox is complete:\n"
     " check   - Local and Cached frames are compact (a 40- or 48-byte header)\n"
     "           and go in one put whose check word covers every byte, so it\n"
     "           may land in any order; frames with code as with fence\n"
     " fence   - every frame with the full 128-byte header: put the frame,\n"
     "           ucp_worker_fence(), put the signal word\n"
     " trailer - one put; the receiver waits for the trailing byte. Sound only\n"
     "           where one put lands in address order (see the test\n"
     "           ifunc_procs.trailer_soundness)\n"
     "Over the active-message write lane every frame is one message in all three.",
     ucs_offsetof(tc_ifunc_config_t, signal),
     UCS_CONFIG_TYPE_ENUM(tc_ifunc_signal_names)},

    {"SLOT_SIZE", "4096",
     "Bytes per mailbox slot, a multiple of 64: the largest frame a peer can send.",
     ucs_offsetof(tc_ifunc_config_t, slot_size), UCS_CONFIG_TYPE_UINT},

    {"RING_DEPTH", "64",
     "Slots per sender in every mailbox: frames a sender may have unconsumed.",
     ucs_offsetof(tc_ifunc_config_t, ring_depth), UCS_CONFIG_TYPE_UINT},

    {"POLL_BATCH", "16",
     "Most frames one call of the mailbox poller runs.",
     ucs_offsetof(tc_ifunc_config_t, poll_batch), UCS_CONFIG_TYPE_UINT},

    {"RING_IDLE", "4096",
     "Empty reads of a sender's ring, in a row, after which the poll asks the\n"
     "sender to ring a doorbell with its next frame and, if the sender agrees,\n"
     "stops reading that ring: an empty poll then reads only the rings that had\n"
     "frames lately, whatever the job size.",
     ucs_offsetof(tc_ifunc_config_t, ring_idle), UCS_CONFIG_TYPE_UINT},

    {"TRAILER_TIMEOUT", "1s",
     "How long a frame that began to arrive (its signal, or a compact frame's\n"
     "sequence number) may wait for the rest of it before it is rejected as\n"
     "truncated. The poller never blocks meanwhile, and only that sender's ring\n"
     "waits; a sender preempted in the middle of its put must not lose the frame,\n"
     "so this is long against any scheduling delay.",
     ucs_offsetof(tc_ifunc_config_t, trailer_timeout), UCS_CONFIG_TYPE_TIME},

    {"CACHE_ENTRIES", "256",
     "Code copies a receiver's code cache holds.",
     ucs_offsetof(tc_ifunc_config_t, cache_entries), UCS_CONFIG_TYPE_UINT},

    {"CHECKED_MAX", "auto",
     "ucp_ifunc_send_nbix with signal 'check': frames up to this size go in one\n"
     "put whose check word covers every byte (the receiver reads each word once\n"
     "more to check it); larger ones as with fence, which waits for a flush\n"
     "between the frame and its signal. auto: where the endpoint's puts go over\n"
     "shared memory they are complete at once and the flush waits for nothing:\n"
     "every frame as with fence; over a network (the flush is a round trip) up\n"
     "to 64k. 0: every frame as with fence.",
     ucs_offsetof(tc_ifunc_config_t, checked_max), UCS_CONFIG_TYPE_MEMUNITS},

    {"POLL_PROGRESS", "16",
     "ucp_poll_ifunc: every this many polls that find nothing, progress the\n"
     "worker of the context it was given, if the program created exactly one\n"
     "there (as a public-API program does). Over transports that emulate puts\n"
     "(tcp) a put lands only when its target progresses, so a program that only\n"
     "polls receives nothing without it. 0: never; the program progresses.",
     ucs_offsetof(tc_ifunc_config_t, poll_progress), UCS_CONFIG_TYPE_UINT},

    {"PORTABLE_ALLOW", "memcpy,memmove,memset,memcmp,strlen,strnlen,strcmp,strncmp,snprintf",
     "The functions of the process (libc) that a Portable jam's bitcode may call,\n"
     "besides the symbols of the receiver's packages' rieds. Any other external\n"
     "the module declares makes the frame a reject ('external', with its name).",
     ucs_offsetof(tc_ifunc_config_t, portable_allow), UCS_CONFIG_TYPE_STRING_ARRAY},

    {"PORTABLE_CODE", "256",
     "Modules a process keeps compiled (Portable frames, one per bitcode hash).\n"
     "When it is full, a new module evicts the least recently run one that is\n"
     "not held (compiling, named by a ring's Cached frames, prepared for a group,\n"
     "or running); when every one is held, a new module is a reject ('resource').",
     ucs_offsetof(tc_ifunc_config_t, portable_code), UCS_CONFIG_TYPE_UINT},

    {"CONFINE_FUEL", "10000000",
     "Security 'confine': the fuel of one confined run, in units of one function\n"
     "call or one entry of a loop header of the shipped module (every member\n"
     "running the same module counts alike). A run out of fuel ends with the\n"
     "trap 'fuel' (a group's status TC_JAM_STATUS_TRAP_FUEL) and the receiver goes on.",
     ucs_offsetof(tc_ifunc_config_t, confine_fuel), UCS_CONFIG_TYPE_ULONG},

    {"CONFINE_STACK", "256k",
     "Security 'confine': the native stack a confined run may use below the\n"
     "runner's frame (its calls' return addresses and spills); deeper, the run\n"
     "ends with the trap 'stack'. The thread that polls needs this much free.",
     ucs_offsetof(tc_ifunc_config_t, confine_stack), UCS_CONFIG_TYPE_MEMUNITS},

    {"CONFINE_SHADOW", "256k",
     "Security 'confine': bytes of the shadow stack, per polling thread, where a\n"
     "confined run's locals live (every local whose address is taken).",
     ucs_offsetof(tc_ifunc_config_t, confine_shadow), UCS_CONFIG_TYPE_MEMUNITS},

    {"CONFINE_ALLOW", "",
     "Security 'confine': functions of the receiver's rieds or process that a\n"
     "confined jam may call besides memcpy, memmove, memset and value-only libm\n"
     "functions. The receiver vouches for each: it runs unconfined, with the\n"
     "jam's arguments, so it must check them as it would a peer's input.",
     ucs_offsetof(tc_ifunc_config_t, confine_allow), UCS_CONFIG_TYPE_STRING_ARRAY},

    {"CONFINE_OWN", "n",
     "Security 'confine': also confine the modules of our own packages, which\n"
     "otherwise run as in 'verify' (to measure confinement, or for a receiver\n"
     "that does not trust its own package files).",
     ucs_offsetof(tc_ifunc_config_t, confine_own), UCS_CONFIG_TYPE_BOOL},

    {"PUBLIC_CODE", "injected",
     "What a frame of the public API (ucp_ifunc_msg_create) carries:\n"
     " injected - the jam's GOT-patched machine code\n"
     " portable - the jam's LLVM module for the sender's architecture (a package\n"
     "            built with twochains-pkg ifunc --portable); the receiver compiles\n"
     "            it once per hash and ucp_poll_ifunc reports no message until then",
     ucs_offsetof(tc_ifunc_config_t, public_code),
     UCS_CONFIG_TYPE_ENUM(tc_ifunc_public_code_names)},

    {"PKG_PATH", "",
     "Colon-separated package manifests, package directories or install\n"
     "prefixes, searched by ucp_register_ifunc for a jam of the given name.",
     ucs_offsetof(tc_ifunc_config_t, pkg_path), UCS_CONFIG_TYPE_STRING},

    {NULL}
};

UCS_CONFIG_REGISTER_TABLE(tc_ifunc_config_table, "Two-Chains ifunc",
                          TC_IFUNC_CONFIG_PREFIX, tc_ifunc_config_t,
                          &ucs_config_global_list)

/* The public Two-Chains API's own variable, under its own name */
typedef struct {
    char *lib_dir;
} tc_ifunc_public_config_t;

static ucs_config_field_t tc_ifunc_public_config_table[] = {
    {"LIB_DIR", "",
     "Where the public Two-Chains ifunc API finds ifuncs (its own variable):\n"
     "colon-separated install prefixes of packages (twochains-pkg ifunc --prefix),\n"
     "searched before UCX_TC_IFUNC_PKG_PATH by ucp_register_ifunc for a jam, and\n"
     "by ucp_poll_ifunc for the package that a frame of an unregistered ifunc names.",
     ucs_offsetof(tc_ifunc_public_config_t, lib_dir), UCS_CONFIG_TYPE_STRING},

    {NULL}
};

UCS_CONFIG_REGISTER_TABLE(tc_ifunc_public_config_table, "Two-Chains public ifunc API",
                          "IFUNC_", tc_ifunc_public_config_t, &ucs_config_global_list)

ucs_status_t tc_ifunc_config_read(tc_ifunc_config_t *config)
{
    return ucs_config_parser_fill_opts(config, tc_ifunc_config_table,
                                       TC_CONFIG_ENV_PREFIX,
                                       TC_IFUNC_CONFIG_PREFIX, 0);
}

void tc_ifunc_config_release(tc_ifunc_config_t *config)
{
    ucs_config_parser_release_opts(config, tc_ifunc_config_table);
}

void tc_ifunc_config_print(FILE *stream, int with_doc)
{
    ucs_config_print_flags_t flags = UCS_CONFIG_PRINT_CONFIG;
    tc_ifunc_config_t config;

    if (tc_ifunc_config_read(&config) != UCS_OK) {
        return;
    }
    if (with_doc) {
        flags |= UCS_CONFIG_PRINT_DOC | UCS_CONFIG_PRINT_HEADER;
    }
    ucs_config_parser_print_opts(stream, "Two-Chains ifunc configuration", &config,
                                 tc_ifunc_config_table, TC_IFUNC_CONFIG_PREFIX,
                                 TC_CONFIG_ENV_PREFIX, flags);
    tc_ifunc_config_release(&config);
}

static pthread_once_t           tc_ifunc_config_once = PTHREAD_ONCE_INIT;
static tc_ifunc_config_t        tc_ifunc_config;
static tc_ifunc_public_config_t tc_ifunc_public_config;

static void tc_ifunc_config_load(void)
{
    if (ucs_config_parser_fill_opts(&tc_ifunc_public_config,
                                    tc_ifunc_public_config_table,
                                    TC_CONFIG_ENV_PREFIX, "IFUNC_", 0) != UCS_OK) {
        tc_ifunc_public_config.lib_dir = NULL;
    }
    if (tc_ifunc_config_read(&tc_ifunc_config) != UCS_OK) {
        /* the parser named the bad variable; run with the defaults */
        tc_ifunc_config.security        = TC_IFUNC_SECURITY_VERIFY;
        tc_ifunc_config.placement       = TC_IFUNC_PLACEMENT_COPY;
        tc_ifunc_config.signal          = TC_IFUNC_SIGNAL_CHECK;
        tc_ifunc_config.slot_size       = 4096;
        tc_ifunc_config.ring_depth      = 64;
        tc_ifunc_config.poll_batch      = 16;
        tc_ifunc_config.ring_idle       = 4096;
        tc_ifunc_config.trailer_timeout = 1.0;
        tc_ifunc_config.cache_entries   = 256;
        tc_ifunc_config.pkg_path        = NULL;
        tc_ifunc_config.checked_max     = UCS_MEMUNITS_AUTO;
        tc_ifunc_config.poll_progress   = 16;
        tc_ifunc_config.confine_fuel    = 10000000;
        tc_ifunc_config.confine_stack   = 256 * 1024;
        tc_ifunc_config.confine_shadow  = 256 * 1024;
    }
}

const tc_ifunc_config_t *tc_ifunc_config_get(void)
{
    pthread_once(&tc_ifunc_config_once, tc_ifunc_config_load);
    return &tc_ifunc_config;
}

ucs_status_t tc_ifunc_policy_check(tc_ifunc_security_t security,
                                   tc_ifunc_placement_t placement)
{
    if ((placement == TC_IFUNC_PLACEMENT_INPLACE) &&
        (security != TC_IFUNC_SECURITY_TRUST)) {
        ucs_error("ifunc: placement 'inplace' runs injected code in the mailbox slot, "
                  "which its sender can still write, so what runs need not be what was "
                  "checked; it is allowed only with security 'trust' (this receiver has "
                  "'%s'): set UCX_TC_IFUNC_SECURITY=trust, or use placement 'copy'",
                  tc_ifunc_security_names[security]);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

const char *tc_ifunc_lib_dir(void)
{
    pthread_once(&tc_ifunc_config_once, tc_ifunc_config_load);
    return tc_ifunc_public_config.lib_dir;
}

/* Parse once at load time so that UCX does not call our variables unused
 * when an application calls ucp_init() first (as config.c does). */
UCS_STATIC_INIT
{
    tc_ifunc_config_get();
}
