"""Real-size models that are not ``hf:`` configs, as factories a MODEL spec names (each with
its ``example_inputs`` on the model): Flux.1's 12B transformer (diffusers) at its published
shape, on a 1024x1024 image's latent (4096 packed patches) and 512 T5 tokens."""

from __future__ import annotations

import torch


def flux_12b() -> torch.nn.Module:
    """FluxTransformer2DModel with Flux.1-dev's configuration (19 double-stream and 38
    single-stream blocks, 24 heads of 128, guidance embedded)."""
    from diffusers import FluxTransformer2DModel

    model = FluxTransformer2DModel(
        patch_size=1,
        in_channels=64,
        num_layers=19,
        num_single_layers=38,
        attention_head_dim=128,
        num_attention_heads=24,
        joint_attention_dim=4096,
        pooled_projection_dim=768,
        guidance_embeds=True,
        axes_dims_rope=(16, 56, 56),
    )
    image, text = 4096, 512
    cpu = {"device": "cpu"}  # made on the CPU even while the model is built on meta
    values = (
        torch.zeros(1, image, 64, **cpu),
        torch.zeros(1, text, 4096, **cpu),
        torch.zeros(1, 768, **cpu),
        torch.tensor([0.5], **cpu),
        torch.zeros(image, 3, **cpu),
        torch.zeros(text, 3, **cpu),
        torch.tensor([3.5], **cpu),
    )
    model.example_inputs = lambda: values  # read by load_model beside the model
    return model.eval()
