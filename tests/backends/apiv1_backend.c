/* The example backend (examples/backend/affine.c) as a backend built against version 1 of
 * ferry/engines/backend_api.h reports itself: API version 1, named "apiv1" after its file. Version 1 has
 * no graph functions and affine implements none, so this is exactly such a backend; the loader
 * must still take it and treat the missing functions as absent. */
#include "ferry/engines/backend_api.h"

#undef FERRY_BACKEND_API_VERSION
#define FERRY_BACKEND_API_VERSION 1u
/* affine.c's own name function is renamed out of the way; the one below is the backend's. */
#define ferry_backend_name ferry_example_affine_name
#include "affine.c"
#undef ferry_backend_name

FERRY_BACKEND_EXPORT const char* ferry_backend_name(void) { return "apiv1"; }
