// Which malloc `ferry serve` runs on. A server of many small requests is limited by malloc: on the
// 16-core H200 host, small HTTP requests through one glibc arena reached 29k infer/s, with eight
// arenas 46-49k but 47 MB more kept after a burst, and with jemalloc 55-59k, keeping 5 MB
// (docs/RESULTS.md, `ferry serve` under hostile load). So the server runs on jemalloc where the
// system has it (Debian's and Ubuntu's libjemalloc2), and on glibc with one arena where not.
#pragma once

namespace ferry::cli {

// Replaces this process by itself with jemalloc preloaded (LD_PRELOAD, and MALLOC_CONF with a
// background thread and 1 s decay unless the user set one), before the server starts anything.
// Returns, doing nothing, where jemalloc is already this process's malloc, where none is
// installed, where FERRY_SERVE_MALLOC=glibc asks for glibc, in a sanitizer's build (its runtime
// must be the first library), or where the re-execution fails.
void run_on_jemalloc_where_installed();

}  // namespace ferry::cli
