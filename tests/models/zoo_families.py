"""The model families of the zoo test (:mod:`tests.models.test_zoo_families`), at tiny sizes:
transformers models as the ``hf:TYPE(overrides)`` specs a user types, and diffusers' DiT, SD3
and Flux transformers as factories here (each with ``example_inputs`` on the model).  Random
weights; nothing is downloaded."""

from __future__ import annotations

from dataclasses import dataclass

import torch

EAGER = "attn_implementation='eager'"
DECODER = (
    "num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4, "
    f"num_key_value_heads=2, vocab_size=128, max_position_embeddings=64, {EAGER}"
)
ENCODER = (
    "num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4, "
    f"vocab_size=128, max_position_embeddings=64, {EAGER}"
)
VISION = (
    "num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4, "
    f"image_size=32, patch_size=8, {EAGER}"
)
SPEECH = (  # wav2vec2-like: a small convolutional feature encoder over raw audio
    "num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4, "
    "conv_dim=[32, 32], conv_stride=[5, 4], conv_kernel=[10, 4], num_conv_pos_embeddings=16, "
    f"num_conv_pos_embedding_groups=4, {EAGER}"
)
SEQ2SEQ = (
    "encoder_layers=2, decoder_layers=2, d_model=64, encoder_attention_heads=4, "
    "decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128"
)
HERE = "tests/models/zoo_families.py"


@dataclass(frozen=True)
class Family:
    """One model family: the spec, what it is, and how many attentions ``fuse-attention``
    should fuse: one per layer; ``0`` for a model without attention (the report says 0
    matches); ``None`` where its attention is not one SDPA computes the same (fused already,
    soft-capped) and the report must say why."""

    name: str
    spec: str
    kind: str
    fuses: int | None = 2
    main_input: str = "input_ids 1x16:int64"  # the default input, as the note says it
    fresh: bool = False  # verify the saved .py in a fresh process (else in this one)
    frontend: str = "auto"  # hf: specs choose export themselves; diffusers' need it


SMALL = "num_hidden_layers=2, hidden_size=64, num_attention_heads=4"
IMAGE = "pixel_values 1x3x32x32:float32"
AUDIO = "input_values 1x16000:float32"
GPT2 = "n_layer=2, n_embd=64, n_head=4, n_positions=64, vocab_size=128, bos_token_id=0"
MOE = "num_experts_per_tok=2"
TOKENS = "pad_token_id=0, bos_token_id=0, eos_token_id=0"  # within the tiny vocabulary

FAMILIES = [
    # decoders
    Family("gpt2", f"hf:gpt2({GPT2}, eos_token_id=0, {EAGER})", "decoder", fresh=True),
    Family("llama", f"hf:llama({DECODER})", "decoder", fresh=True),
    Family("mistral", f"hf:mistral({DECODER})", "decoder"),
    Family("qwen2", f"hf:qwen2({DECODER})", "decoder"),
    Family("qwen3", f"hf:qwen3({DECODER}, head_dim=16)", "decoder"),
    Family("phi3", f"hf:phi3({DECODER}, {TOKENS})", "decoder"),
    Family("gemma", f"hf:gemma({DECODER}, head_dim=16)", "decoder"),
    Family("olmo2", f"hf:olmo2({DECODER})", "decoder"),
    Family("smollm3", f"hf:smollm3({DECODER}, {TOKENS})", "decoder"),
    Family("gemma2", f"hf:gemma2({DECODER}, head_dim=16)", "decoder", fuses=None),  # soft-capped
    Family("gemma3_text", f"hf:gemma3_text({DECODER}, head_dim=16, sliding_window=8)", "decoder"),
    Family("falcon", f"hf:falcon({SMALL}, vocab_size=128, {EAGER})", "decoder"),
    Family("gpt_neox", f"hf:gpt_neox({ENCODER})", "decoder"),
    Family(
        "opt",
        f"hf:opt({SMALL}, ffn_dim=128, vocab_size=128, max_position_embeddings=64, "
        f"word_embed_proj_dim=64, {EAGER})",
        "decoder",
    ),
    # mixtures of experts
    Family("mixtral", f"hf:mixtral({DECODER}, num_local_experts=4, {MOE})", "moe", fresh=True),
    Family(
        "qwen3_moe",
        f"hf:qwen3_moe({DECODER}, head_dim=16, num_experts=4, {MOE}, moe_intermediate_size=32)",
        "moe",
        fresh=True,
    ),
    Family(
        "qwen2_moe",
        f"hf:qwen2_moe({DECODER}, num_experts=4, {MOE}, moe_intermediate_size=32, "
        "shared_expert_intermediate_size=32)",
        "moe",
    ),
    Family(  # multi-head latent attention, routed and shared experts
        "deepseek_v3",
        f"hf:deepseek_v3({DECODER.replace('key_value_heads=2', 'key_value_heads=4')}, {MOE}, "
        "n_routed_experts=4, moe_intermediate_size=32, q_lora_rank=16, kv_lora_rank=16, "
        "qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16, first_k_dense_replace=1, "
        "n_group=1, topk_group=1)",
        "moe",
    ),
    # state space
    Family(
        "mamba",
        "hf:mamba(num_hidden_layers=2, hidden_size=32, state_size=8, vocab_size=128)",
        "state space",
        fuses=0,
        fresh=True,
    ),
    Family(
        "mamba2",
        "hf:mamba2(num_hidden_layers=2, hidden_size=32, state_size=8, num_heads=4, head_dim=16, "
        "n_groups=1, chunk_size=8, vocab_size=128)",
        "state space",
        fuses=0,
    ),
    # encoders
    Family("bert", f"hf:bert({ENCODER})", "encoder"),
    Family("roberta", f"hf:roberta({ENCODER})", "encoder"),
    Family(
        "distilbert",
        f"hf:distilbert(n_layers=2, dim=64, hidden_dim=128, n_heads=4, "
        f"vocab_size=128, max_position_embeddings=64, {EAGER})",
        "encoder",
    ),
    Family(
        "modernbert",
        f"hf:modernbert({ENCODER}, {TOKENS}, cls_token_id=0, sep_token_id=0)",
        "encoder",
    ),
    # encoder-decoders: their encoder
    Family(
        "t5",
        f"hf:t5(num_layers=2, d_model=64, d_ff=128, num_heads=4, d_kv=16, vocab_size=128, {EAGER})",
        "encoder-decoder",
        fresh=True,
    ),
    Family(
        "bart",
        f"hf:bart({SEQ2SEQ}, vocab_size=128, max_position_embeddings=64, {EAGER})",
        "encoder-decoder",
    ),
    Family(
        "whisper",
        f"hf:whisper({SEQ2SEQ}, num_mel_bins=16, max_source_positions=32, {EAGER})",
        "encoder-decoder, audio",
        fresh=True,
        main_input="input_features 1x16x64:float32",
    ),
    # vision
    Family("vit", f"hf:vit({VISION})", "vision", fresh=True, main_input=IMAGE),
    Family(  # (its MLP's width is mlp_ratio's: it has no intermediate_size)
        "dinov2",
        f"hf:dinov2({VISION.replace('intermediate_size=128', 'mlp_ratio=2')})",
        "vision",
        fresh=True,
        main_input=IMAGE,
    ),
    Family("clip_vision_model", f"hf:clip_vision_model({VISION})", "vision", main_input=IMAGE),
    Family("siglip_vision_model", f"hf:siglip_vision_model({VISION})", "vision", main_input=IMAGE),
    Family(
        "swin",
        f"hf:swin(embed_dim=16, depths=[1, 1], num_heads=[2, 2], image_size=32, "
        f"patch_size=4, window_size=4, {EAGER})",
        "vision",
        main_input=IMAGE,
    ),
    Family(
        "convnext",
        "hf:convnext(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], image_size=32)",
        "vision",
        fuses=0,
        main_input=IMAGE,
    ),
    Family(
        "videomae",
        f"hf:videomae({VISION}, num_frames=4, tubelet_size=2)",
        "video",
        main_input="pixel_values 1x4x3x32x32:float32",
    ),
    # audio
    Family("wav2vec2", f"hf:wav2vec2({SPEECH})", "audio", fresh=True, main_input=AUDIO),
    Family("hubert", f"hf:hubert({SPEECH})", "audio", main_input=AUDIO),
    # diffusers transformers (SD3's and Flux's processors call SDPA already)
    Family("dit", f"{HERE}:dit", "diffusion", fresh=True, frontend="export", main_input=""),
    Family("sd3", f"{HERE}:sd3", "diffusion", fuses=None, frontend="export", main_input=""),
    Family("flux", f"{HERE}:flux", "diffusion", fuses=None, frontend="export", main_input=""),
]


# --- diffusers transformers ----------------------------------------------------------------


def _inputs(model: torch.nn.Module, *values: torch.Tensor) -> torch.nn.Module:
    model.example_inputs = lambda: values  # read by load_model beside the model
    return model.eval()


def dit():
    """DiT (class-conditional, patch 2 on an 8x8 latent) with the classic attention
    processor: matmul, softmax, matmul, which fuse-attention rewrites."""
    from diffusers import DiTTransformer2DModel
    from diffusers.models.attention_processor import Attention, AttnProcessor

    model = DiTTransformer2DModel(
        num_attention_heads=2,
        attention_head_dim=16,
        in_channels=4,
        num_layers=2,
        sample_size=8,
        patch_size=2,
        num_embeds_ada_norm=10,
    )
    for module in model.modules():
        if isinstance(module, Attention):
            module.set_processor(AttnProcessor())
    gen = torch.Generator().manual_seed(0)
    return _inputs(
        model, torch.randn(1, 4, 8, 8, generator=gen), torch.tensor([10]), torch.tensor([3])
    )


def sd3():
    """Stable Diffusion 3's MMDiT: joint attention of image and text tokens (SDPA)."""
    from diffusers import SD3Transformer2DModel

    model = SD3Transformer2DModel(
        sample_size=8,
        patch_size=2,
        in_channels=4,
        num_layers=2,
        attention_head_dim=8,
        num_attention_heads=2,
        joint_attention_dim=32,
        caption_projection_dim=16,
        pooled_projection_dim=16,
        out_channels=4,
        pos_embed_max_size=16,
    )
    gen = torch.Generator().manual_seed(0)
    return _inputs(
        model,
        torch.randn(1, 4, 8, 8, generator=gen),
        torch.randn(1, 6, 32, generator=gen),  # 6 text tokens
        torch.randn(1, 16, generator=gen),
        torch.tensor([10]),
    )


def flux():
    """Flux: double-stream then single-stream blocks, rotary position ids (SDPA)."""
    from diffusers import FluxTransformer2DModel

    model = FluxTransformer2DModel(
        patch_size=1,
        in_channels=8,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=16,
        num_attention_heads=2,
        joint_attention_dim=32,
        pooled_projection_dim=16,
        axes_dims_rope=(4, 6, 6),
    )
    gen = torch.Generator().manual_seed(0)
    image, text = 16, 6  # a 4x4 latent of packed patches, 6 text tokens
    return _inputs(
        model,
        torch.randn(1, image, 8, generator=gen),
        torch.randn(1, text, 32, generator=gen),
        torch.randn(1, 16, generator=gen),
        torch.tensor([0.5]),
        torch.zeros(image, 3),
        torch.zeros(text, 3),
    )
