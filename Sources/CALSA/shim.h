#include <alsa/asoundlib.h>

/* alsa-lib prints its errors to stderr; playerd reports them itself, as typed errors carrying
   snd_strerror's text. Swift cannot define a C-variadic callback, so the handler lives here. */
static void playerd_alsa_quiet_handler(const char *file, int line, const char *function, int err,
                                       const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void playerd_alsa_silence_errors(void) {
    snd_lib_error_set_handler(playerd_alsa_quiet_handler);
}
