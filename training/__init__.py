"""LoRA training: SFT recipe, curriculum generator, training-log reader, behavioural-eval callback."""
