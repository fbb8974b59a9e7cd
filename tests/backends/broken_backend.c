/* Backends that ferry must refuse, one per build (tests/backends/CMakeLists.txt defines which):
 *   BROKEN_OLD_API      reports another API version
 *   BROKEN_PARTIAL      the right version, but most required functions are missing
 *   BROKEN_UNRESOLVED   needs a function no library provides, so it cannot be loaded at all */
#include "ferry/engines/backend_api.h"

#if defined(BROKEN_UNRESOLVED)
void ferry_test_missing_dependency(void);
#endif

FERRY_BACKEND_EXPORT uint32_t ferry_backend_api_version(void) {
#if defined(BROKEN_OLD_API)
  return FERRY_BACKEND_API_VERSION + 1;
#elif defined(BROKEN_UNRESOLVED)
  ferry_test_missing_dependency();
  return FERRY_BACKEND_API_VERSION;
#else
  return FERRY_BACKEND_API_VERSION;
#endif
}

FERRY_BACKEND_EXPORT const char* ferry_backend_name(void) { return "broken"; }
FERRY_BACKEND_EXPORT const char* ferry_backend_version(void) { return "0"; }
