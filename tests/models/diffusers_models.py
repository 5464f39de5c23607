"""A tiny diffusers UNet with the classic attention processor (baddbmm -> softmax -> bmm), self-
and cross-attention; random weights, nothing downloaded."""

import torch


def unet_classic():
    from diffusers import UNet2DConditionModel
    from diffusers.models.attention_processor import AttnProcessor

    model = UNet2DConditionModel(
        sample_size=8,
        in_channels=4,
        out_channels=4,
        layers_per_block=1,
        block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32,
        attention_head_dim=8,
        norm_num_groups=8,
    )
    model.set_attn_processor(AttnProcessor())
    return model.eval()


def example_inputs():
    gen = torch.Generator().manual_seed(0)
    sample = torch.randn(1, 4, 8, 8, generator=gen)
    text = torch.randn(1, 6, 32, generator=gen)  # 6 tokens: k and v of another length
    return (sample, torch.tensor(10), text)
