"""Small transformers models built from configs (random weights; nothing is downloaded)."""

import torch


def gpt2_tiny():
    return gpt2_layers(2)


def bert_tiny():
    from transformers import BertConfig, BertModel

    config = BertConfig(
        num_hidden_layers=2,
        hidden_size=64,
        num_attention_heads=4,
        intermediate_size=128,
        vocab_size=128,
        max_position_embeddings=64,
    )
    return BertModel(config).eval()


def example_inputs():
    return (torch.randint(0, 128, (1, 16)),)


def gpt2_layers(n: int):
    from transformers import GPT2Config, GPT2Model

    config = GPT2Config(
        n_layer=n,
        n_embd=64,
        n_head=4,
        vocab_size=128,
        n_positions=64,
        bos_token_id=0,
        eos_token_id=0,
    )
    config.use_cache = False
    return GPT2Model(config).eval()


def gpt2_12():
    return gpt2_layers(12)


def gpt2_48():
    return gpt2_layers(48)


# --- eager attention (matmul, softmax, matmul), what fuse-attention rewrites -----------------


def _eager(config_class, model_class, attn="eager", **sizes):
    """A model of ``sizes``; ``attn=None``: the attention transformers picks (SDPA)."""
    config = config_class(
        vocab_size=128, **sizes, **({"attn_implementation": attn} if attn else {})
    )
    config.use_cache = False
    return model_class(config).eval()


def gpt2_eager():
    from transformers import GPT2Config, GPT2Model

    return _eager(GPT2Config, GPT2Model, n_layer=2, n_embd=64, n_head=4, n_positions=64)


def bert_eager():
    from transformers import BertConfig, BertModel

    return _eager(
        BertConfig,
        BertModel,
        num_hidden_layers=2,
        hidden_size=64,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=64,
    )


def decoder(config_class, model_class, layers=2, attn="eager", **more):
    """A small LLaMA-like decoder (grouped-query attention) of ``layers`` layers."""
    return _eager(
        config_class,
        model_class,
        attn,
        num_hidden_layers=layers,
        hidden_size=64,
        intermediate_size=128,
        num_attention_heads=4,
        num_key_value_heads=2,  # grouped-query attention: k and v repeated for the heads
        max_position_embeddings=64,
        **more,
    )


def llama_eager():
    from transformers import LlamaConfig, LlamaModel

    return decoder(LlamaConfig, LlamaModel)


def qwen2_eager():
    from transformers import Qwen2Config, Qwen2Model

    return decoder(Qwen2Config, Qwen2Model)
