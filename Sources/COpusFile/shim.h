#include <opusfile.h>
#include <opus.h>

// libopus's ctl functions are variadic, which Swift cannot call: these wrap the few the decoder uses.

/// `OPUS_SET_GAIN` (Q7.8 dB) on a plain decoder.
static inline int playerd_opus_set_gain(OpusDecoder *decoder, opus_int32 gain) {
    return opus_decoder_ctl(decoder, OPUS_SET_GAIN(gain));
}

/// `OPUS_RESET_STATE` on a plain decoder.
static inline int playerd_opus_reset(OpusDecoder *decoder) {
    return opus_decoder_ctl(decoder, OPUS_RESET_STATE);
}

/// `OPUS_GET_LAST_PACKET_DURATION` of a multistream decoder (its first stream's): 0 after it is
/// created or reset, until it decodes.
static inline opus_int32 playerd_opus_ms_last_packet_duration(OpusMSDecoder *decoder) {
    opus_int32 duration = 0;
    if (opus_multistream_decoder_ctl(decoder, OPUS_GET_LAST_PACKET_DURATION(&duration)) != OPUS_OK) return -1;
    return duration;
}

/// `OPUS_SET_GAIN` (Q7.8 dB) on a multistream decoder.
static inline int playerd_opus_ms_set_gain(OpusMSDecoder *decoder, opus_int32 gain) {
    return opus_multistream_decoder_ctl(decoder, OPUS_SET_GAIN(gain));
}
