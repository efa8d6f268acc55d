// What Swift cannot take from sd-bus itself: the MPRIS vtables (built with function-like macros) and
// the variadic calls, as plain functions. Everything else (sd_bus_open_user, request_name,
// message_append_basic, process, get_fd ...) Swift calls directly.
#ifndef CSDBUS_H
#define CSDBUS_H

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#define CSDBUS_OBJECT_PATH "/org/mpris/MediaPlayer2"
#define CSDBUS_ROOT_INTERFACE "org.mpris.MediaPlayer2"
#define CSDBUS_PLAYER_INTERFACE "org.mpris.MediaPlayer2.Player"

/// A method call on either interface: `member` is its name; reply (csdbus_reply_empty) and return
/// its result, or set `error` and return a negative errno.
typedef int (*csdbus_method_handler)(void *context, const char *member, sd_bus_message *call,
                                     sd_bus_error *error);
/// A property read: append the value (of the property's signature) to `reply`.
typedef int (*csdbus_property_getter)(void *context, const char *property, sd_bus_message *reply,
                                      sd_bus_error *error);
/// A property write: read the value (sd-bus has entered the variant) from `value`.
typedef int (*csdbus_property_setter)(void *context, const char *property, sd_bus_message *value,
                                      sd_bus_error *error);

/// The three callbacks and the context they get; must outlive the slots that use it.
typedef struct csdbus_handlers {
    csdbus_method_handler method;
    csdbus_property_getter get;
    csdbus_property_setter set;
    void *context;
} csdbus_handlers;

/// Adds org.mpris.MediaPlayer2 and org.mpris.MediaPlayer2.Player at /org/mpris/MediaPlayer2, both
/// served by `handlers`. Returns 0 or a negative errno.
int csdbus_add_mpris_objects(sd_bus *bus, csdbus_handlers *handlers, sd_bus_slot **root_slot,
                             sd_bus_slot **player_slot);

/// Replies to a method call with no values.
int csdbus_reply_empty(sd_bus_message *call);

/// Emits the Player interface's Seeked signal with the new position in microseconds.
int csdbus_emit_seeked(sd_bus *bus, int64_t position);

/// Emits one PropertiesChanged for `count` properties of `interface` (values come from the getter).
int csdbus_emit_changed(sd_bus *bus, const char *interface, const char *const *names, size_t count);

#endif
