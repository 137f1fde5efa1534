"""utvm: compile TFLite and ONNX models into plain C libraries for microcontrollers with TVM."""

__version__ = "0.1.0"
