#include <chromaprint.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

/* libchromaprint's calls playerd makes. playerd does not link libchromaprint: it brings libavcodec and
   its many libraries with it, 15 MB of resident memory and 70 ms at every start for a command few
   clients send. It is loaded with dlopen for each getfingerprint instead. */
typedef struct {
    ChromaprintContext *(*create)(int algorithm);
    void (*destroy)(ChromaprintContext *context);
    int (*start)(ChromaprintContext *context, int sample_rate, int num_channels);
    int (*feed)(ChromaprintContext *context, const int16_t *data, int size);
    int (*finish)(ChromaprintContext *context);
    int (*fingerprint)(ChromaprintContext *context, char **fingerprint);
    void (*dealloc)(void *pointer);
} playerd_chromaprint_api;

/* Loads libchromaprint (its Debian 12 soname) and fills `api`: the library's handle, for
   playerd_chromaprint_unload, when every call was found; NULL otherwise (then dlerror says why). Loads and
   unloads are counted by the dynamic linker: fingerprints made at once share one copy, and the memory goes
   back once the last one unloads it. */
static inline void *playerd_chromaprint_load(playerd_chromaprint_api *api) {
    void *library = dlopen("libchromaprint.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        return NULL;
    }
    api->create = (ChromaprintContext * (*)(int)) dlsym(library, "chromaprint_new");
    api->destroy = (void (*)(ChromaprintContext *))dlsym(library, "chromaprint_free");
    api->start = (int (*)(ChromaprintContext *, int, int))dlsym(library, "chromaprint_start");
    api->feed = (int (*)(ChromaprintContext *, const int16_t *, int))dlsym(library, "chromaprint_feed");
    api->finish = (int (*)(ChromaprintContext *))dlsym(library, "chromaprint_finish");
    api->fingerprint = (int (*)(ChromaprintContext *, char **))dlsym(library, "chromaprint_get_fingerprint");
    api->dealloc = (void (*)(void *))dlsym(library, "chromaprint_dealloc");
    if (api->create == NULL || api->destroy == NULL || api->start == NULL || api->feed == NULL ||
        api->finish == NULL || api->fingerprint == NULL || api->dealloc == NULL) {
        dlclose(library);
        return NULL;
    }
    return library;
}

/* Unloads what playerd_chromaprint_load loaded; its calls may not be made after. */
static inline void playerd_chromaprint_unload(void *library) {
    dlclose(library);
}
