/* api_run_request.h - the public run request (include/mieb.h's mieb_run_request): the
   session's options (plan/run_session.h), filled by name, and the strings it owns. */
#ifndef MIEB_API_RUN_REQUEST_H
#define MIEB_API_RUN_REQUEST_H

#include "../plan/run_session.h"

struct mieb_run_request {
    struct mieb_run_options o; /* its strings and lists point into owned below */
    char **owned;              /* every string and list array the request allocated */
    int n_owned, cap_owned;
};

#endif
