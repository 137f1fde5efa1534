"""Build the test models of this folder: MobileNetV3-Small/Large and EfficientNet-Lite0 style
blocks with seeded random weights, float32 and int8, converted by TensorFlow's converter.

    python make_models.py OUT_DIR          # every model, one process per conversion
    python make_models.py OUT_DIR NAME MODE

Needs tensorflow-cpu (not a test dependency: the .tflite files are committed). The blocks are
those of keras.applications' MobileNetV3 (expand 1x1, hard-swish, ZeroPadding + strided
depthwise, squeeze-excite with hard-sigmoid, project 1x1, residual add) and EfficientNet-Lite
(MBConv with ReLU6, no squeeze-excite), at 32x32 / 48x48 inputs with few channels.
"""
import subprocess
import sys
from pathlib import Path

MODELS = ("mnv3_small_blocks", "mnv3_large_blocks", "efficientnet_lite0_blocks")
MODES = ("float32", "int8")


def build(name):  # noqa: C901
    import tensorflow as tf

    L = tf.keras.layers
    tf.keras.utils.set_random_seed(7)

    def hswish(x):
        return L.Activation("hard_swish")(x)

    def act(x, kind):
        return hswish(x) if kind == "hs" else L.ReLU(6.0)(x) if kind == "relu6" else L.ReLU()(x)

    def se(x, ch):
        s = L.GlobalAveragePooling2D(keepdims=True)(x)
        s = L.Conv2D(max(ch // 4, 4), 1, activation="relu")(s)
        s = L.Conv2D(ch, 1)(s)
        s = L.Activation("hard_sigmoid")(s)
        return L.Multiply()([x, s])

    def block(x, expand, out, k, stride, kind, squeeze):
        """keras.applications.MobileNetV3's inverted residual block (with BatchNormalization)."""
        inp, ch = x, x.shape[-1]
        if expand != ch:
            x = L.Conv2D(expand, 1, use_bias=False)(x)
            x = act(L.BatchNormalization()(x), kind)
        if stride == 2:
            x = L.ZeroPadding2D(((k // 2 - 1 + k % 2, k // 2), (k // 2 - 1 + k % 2, k // 2)))(x)
        x = L.DepthwiseConv2D(k, strides=stride, padding="same" if stride == 1 else "valid", use_bias=False)(x)
        x = act(L.BatchNormalization()(x), kind)
        if squeeze:
            x = se(x, expand)
        x = L.Conv2D(out, 1, use_bias=False)(x)
        x = L.BatchNormalization()(x)
        return L.Add()([inp, x]) if stride == 1 and ch == out else x

    if name == "mnv3_small_blocks":
        size, x0 = 48, L.Input((48, 48, 3), batch_size=1)
        x = hswish(L.BatchNormalization()(L.Conv2D(8, 3, strides=2, padding="same", use_bias=False)(x0)))
        x = block(x, 8, 8, 3, 2, "relu", True)
        x = block(x, 24, 12, 3, 2, "relu", False)
        x = block(x, 32, 12, 3, 1, "relu", False)
        x = block(x, 48, 16, 5, 2, "hs", True)
        x = block(x, 64, 16, 5, 1, "hs", True)
        x = hswish(L.BatchNormalization()(L.Conv2D(48, 1, use_bias=False)(x)))
    elif name == "mnv3_large_blocks":
        size, x0 = 32, L.Input((32, 32, 3), batch_size=1)
        x = hswish(L.BatchNormalization()(L.Conv2D(8, 3, strides=2, padding="same", use_bias=False)(x0)))
        x = block(x, 8, 8, 3, 1, "relu", False)
        x = block(x, 32, 12, 3, 2, "relu", False)
        x = block(x, 36, 12, 3, 1, "relu", False)
        x = block(x, 36, 16, 5, 2, "relu", True)
        x = block(x, 64, 16, 5, 1, "relu", True)
        x = block(x, 64, 24, 3, 1, "hs", False)
        x = block(x, 96, 24, 3, 1, "hs", True)
        x = hswish(L.BatchNormalization()(L.Conv2D(64, 1, use_bias=False)(x)))
    else:  # EfficientNet-Lite0: MBConv, ReLU6, no squeeze-excite, stem 3x3 stride 2
        size, x0 = 48, L.Input((48, 48, 3), batch_size=1)
        x = L.ReLU(6.0)(L.BatchNormalization()(L.Conv2D(8, 3, strides=2, padding="same", use_bias=False)(x0)))
        x = block(x, 8, 8, 3, 1, "relu6", False)
        x = block(x, 48, 12, 3, 2, "relu6", False)
        x = block(x, 72, 12, 3, 1, "relu6", False)
        x = block(x, 72, 20, 5, 2, "relu6", False)
        x = block(x, 120, 20, 5, 1, "relu6", False)
        x = L.ReLU(6.0)(L.BatchNormalization()(L.Conv2D(64, 1, use_bias=False)(x)))
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(10)(x)
    return tf.keras.Model(x0, x), (size, size, 3)


def convert(name, mode, out):
    import numpy as np
    import tensorflow as tf

    model, shape = build(name)
    # BatchNormalization with random statistics, so that folding it is not the identity
    rng = np.random.default_rng(3)
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            g, b, m, v = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, g.shape), rng.normal(0, 0.2, b.shape),
                               rng.normal(0, 0.2, m.shape), rng.uniform(0.5, 1.5, v.shape)])
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if mode == "int8":
        data_rng = np.random.default_rng(11)

        def rep():
            for _ in range(32):
                yield [data_rng.standard_normal((1, *shape)).astype(np.float32)]

        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    data = conv.convert()
    path = Path(out) / f"{name}_{mode}.tflite"
    path.write_bytes(data)
    print(f"{path}: {len(data)} bytes")


if __name__ == "__main__":
    if len(sys.argv) == 4:
        convert(sys.argv[2], sys.argv[3], sys.argv[1])
    else:
        for n in MODELS:
            for m in MODES:
                subprocess.run([sys.executable, __file__, sys.argv[1], n, m], check=True)
