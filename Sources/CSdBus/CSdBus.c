#include "CSdBus.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

// Every vtable entry points at one of these; they hand the member's name to Swift.

static int method_trampoline(sd_bus_message *call, void *userdata, sd_bus_error *error) {
    csdbus_handlers *handlers = userdata;
    return handlers->method(handlers->context, sd_bus_message_get_member(call), call, error);
}

static int get_trampoline(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)bus;
    (void)path;
    (void)interface;
    csdbus_handlers *handlers = userdata;
    return handlers->get(handlers->context, property, reply, error);
}

static int set_trampoline(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *value, void *userdata, sd_bus_error *error) {
    (void)bus;
    (void)path;
    (void)interface;
    csdbus_handlers *handlers = userdata;
    return handlers->set(handlers->context, property, value, error);
}

// Desktop clients are ordinary processes of the session's user: nothing here needs a capability.
#define METHOD(name, in) SD_BUS_METHOD(name, in, "", method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED)
#define CONSTANT(name, signature) SD_BUS_PROPERTY(name, signature, get_trampoline, 0, SD_BUS_VTABLE_PROPERTY_CONST)
#define CHANGING(name, signature) \
    SD_BUS_PROPERTY(name, signature, get_trampoline, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)
#define WRITABLE(name, signature)                                                                       \
    SD_BUS_WRITABLE_PROPERTY(name, signature, get_trampoline, set_trampoline, 0,                        \
                             SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE | SD_BUS_VTABLE_UNPRIVILEGED)

static const sd_bus_vtable root_vtable[] = {
    SD_BUS_VTABLE_START(0),
    METHOD("Raise", ""),
    METHOD("Quit", ""),
    CONSTANT("CanQuit", "b"),
    CONSTANT("CanRaise", "b"),
    CONSTANT("HasTrackList", "b"),
    CONSTANT("Identity", "s"),
    CONSTANT("SupportedUriSchemes", "as"),
    CONSTANT("SupportedMimeTypes", "as"),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable player_vtable[] = {
    SD_BUS_VTABLE_START(0),
    METHOD("Next", ""),
    METHOD("Previous", ""),
    METHOD("Pause", ""),
    METHOD("PlayPause", ""),
    METHOD("Stop", ""),
    METHOD("Play", ""),
    SD_BUS_METHOD_WITH_NAMES("Seek", "x", SD_BUS_PARAM(Offset), "", "", method_trampoline,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("SetPosition", "ox", SD_BUS_PARAM(TrackId) SD_BUS_PARAM(Position), "", "",
                             method_trampoline, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("OpenUri", "s", SD_BUS_PARAM(Uri), "", "", method_trampoline,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_NAMES("Seeked", "x", SD_BUS_PARAM(Position), 0),
    CHANGING("PlaybackStatus", "s"),
    WRITABLE("LoopStatus", "s"),
    WRITABLE("Rate", "d"),
    WRITABLE("Shuffle", "b"),
    CHANGING("Metadata", "a{sv}"),
    WRITABLE("Volume", "d"),
    // The MPRIS spec: Position changes all the time, so it is never signalled (clients extrapolate,
    // and Seeked reports jumps). No flag is sd-bus's EmitsChangedSignal=false.
    SD_BUS_PROPERTY("Position", "x", get_trampoline, 0, 0),
    CONSTANT("MinimumRate", "d"),
    CONSTANT("MaximumRate", "d"),
    CHANGING("CanGoNext", "b"),
    CHANGING("CanGoPrevious", "b"),
    CHANGING("CanPlay", "b"),
    CHANGING("CanPause", "b"),
    CHANGING("CanSeek", "b"),
    CONSTANT("CanControl", "b"),
    SD_BUS_VTABLE_END,
};

int csdbus_add_mpris_objects(sd_bus *bus, csdbus_handlers *handlers, sd_bus_slot **root_slot,
                             sd_bus_slot **player_slot) {
    int result = sd_bus_add_object_vtable(bus, root_slot, CSDBUS_OBJECT_PATH, CSDBUS_ROOT_INTERFACE,
                                          root_vtable, handlers);
    if (result < 0) {
        return result;
    }
    result = sd_bus_add_object_vtable(bus, player_slot, CSDBUS_OBJECT_PATH, CSDBUS_PLAYER_INTERFACE,
                                      player_vtable, handlers);
    if (result < 0) {
        *root_slot = sd_bus_slot_unref(*root_slot);
    }
    return result;
}

int csdbus_reply_empty(sd_bus_message *call) {
    return sd_bus_reply_method_return(call, NULL);
}

int csdbus_emit_seeked(sd_bus *bus, int64_t position) {
    return sd_bus_emit_signal(bus, CSDBUS_OBJECT_PATH, CSDBUS_PLAYER_INTERFACE, "Seeked", "x", position);
}

int csdbus_emit_changed(sd_bus *bus, const char *interface, const char *const *names, size_t count) {
    // sd-bus wants a NULL-terminated list.
    char **list = calloc(count + 1, sizeof(char *));
    if (list == NULL) {
        return -ENOMEM;
    }
    memcpy(list, names, count * sizeof(char *));
    int result = sd_bus_emit_properties_changed_strv(bus, CSDBUS_OBJECT_PATH, interface, list);
    free(list);
    return result;
}
