"""The codecs: framing, headers, record batches, the generated messages, codegen, fuzzing."""
