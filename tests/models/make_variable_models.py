"""Build the streaming test models of this folder: a small keyword-spotting style layer that
keeps its last frames in a TensorFlow variable (resource variable), float32 and int8, converted
by TensorFlow's converter, which writes CALL_ONCE with an init subgraph (VAR_HANDLE,
ASSIGN_VARIABLE of the initial value), then VAR_HANDLE, READ_VARIABLE and ASSIGN_VARIABLE in
the main subgraph.

    python make_variable_models.py OUT_DIR

Needs tensorflow-cpu (not a test dependency: the .tflite files are committed). The layer: the
state holds the last 4 frames of 8 features (initially a seeded random buffer, not zeros, so
that the init subgraph's values show), the new frame is appended and the oldest dropped, and
the output is a 1-D convolution over the 5 frames (a dense layer on the flattened window, ReLU).
"""
import sys
from pathlib import Path

import numpy as np

FRAMES, FEATURES, UNITS = 4, 8, 6


def build():
    import tensorflow as tf

    rng = np.random.default_rng(11)
    w = tf.constant(rng.uniform(-0.5, 0.5, ((FRAMES + 1) * FEATURES, UNITS)).astype(np.float32))
    b = tf.constant(rng.uniform(-0.2, 0.2, (UNITS,)).astype(np.float32))
    init = rng.uniform(-1, 1, (1, FRAMES * FEATURES)).astype(np.float32)

    class Streaming(tf.Module):
        def __init__(self):
            self.frames = tf.Variable(tf.constant(init))

        @tf.function(input_signature=[tf.TensorSpec([1, FEATURES], tf.float32)])
        def __call__(self, x):
            window = tf.concat([self.frames, x], axis=1)
            self.frames.assign(window[:, FEATURES:])
            return tf.nn.relu(tf.matmul(window, w) + b)

    return Streaming()


def convert(mode):
    import tensorflow as tf

    module = build()
    conv = tf.lite.TFLiteConverter.from_concrete_functions([module.__call__.get_concrete_function()], module)
    conv.experimental_enable_resource_variables = True
    if mode == "int8":
        rng = np.random.default_rng(3)

        def representative():
            for _ in range(64):
                yield [rng.uniform(-1, 1, (1, FEATURES)).astype(np.float32)]

        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = representative
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
    for mode in ("float32", "int8"):
        (out / f"streaming_variable_{mode}.tflite").write_bytes(convert(mode))
