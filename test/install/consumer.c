/* Compiled against an installed twochains with only `pkg-config twochains`. */
#include <twochains/twochains.h>
#include <twochains/group.h>
#include <stdio.h>

int main(void)
{
    tc_progress_engine_h engine;
    tc_bootstrap_h boot;
    int value = 7, all = 0;

    if (tc_bootstrap_create_from_env(&boot) != UCS_OK ||
        tc_bootstrap_allgather(boot, &value, sizeof(value), &all) != UCS_OK ||
        all != 7) {
        return 1;
    }
    if (tc_progress_engine_create(NULL, NULL, &engine) != UCS_OK) {
        return 1;
    }
    tc_progress(engine);
    /* the group library links and its C API is callable */
    if (tc_group_create(NULL, NULL, NULL) != UCS_ERR_INVALID_PARAM) {
        return 1;
    }
    tc_progress_engine_destroy(engine);
    tc_bootstrap_destroy(boot);
    printf("consumer: twochains %s on UCX %s ok\n", TC_VERSION_STRING, TC_UCX_BUILT_VERSION);
    return 0;
}
