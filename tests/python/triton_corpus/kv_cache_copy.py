"""Writing new keys and values into a paged KV cache, as vLLM's Triton
`reshape_and_cache_flash` does (vllm/attention/ops/triton_reshape_and_cache_flash.py): key and
value of (num_tokens, num_heads, head_size), caches of (num_blocks, block_size, num_heads,
head_size); token t goes to slot `slot_mapping[t]` (int64), that is page
`slot // block_size`, row `slot % block_size`; a negative slot (a padded token) is skipped.
Programs are (token, TILE_SIZE-wide tile of num_heads * head_size), strides typed `tl.int64`
as vLLM writes them. `reshape_and_cache_kernel_flash` skips a padded token with vLLM's early
`return`; `reshape_and_cache_kernel` folds the test into the store mask instead."""
import triton
import triton.language as tl


@triton.jit
def reshape_and_cache_kernel_flash(
    key_ptr,  # [num_tokens, num_heads, head_size]
    value_ptr,  # [num_tokens, num_heads, head_size]
    key_cache_ptr,  # [num_blocks, block_size, num_heads, head_size]
    value_cache_ptr,  # [num_blocks, block_size, num_heads, head_size]
    slot_mapping_ptr,  # [num_tokens]
    key_stride: tl.int64,
    value_stride: tl.int64,
    block_stride: tl.int64,
    page_stride: tl.int64,
    num_heads: tl.constexpr,
    head_size: tl.constexpr,
    block_size: tl.constexpr,
    TILE_SIZE: tl.constexpr,
):
    token_idx = tl.program_id(axis=0)
    slot_idx = tl.load(slot_mapping_ptr + token_idx).to(tl.int64)
    if slot_idx < 0:
        # Padding token that should be ignored.
        return

    tile_i = tl.program_id(axis=1)
    tile_offs = tl.arange(0, TILE_SIZE)
    tile_pos = tile_i * TILE_SIZE + tile_offs

    block_idx = slot_idx // block_size
    block_offset = slot_idx % block_size

    src_key_idx = token_idx.to(tl.int64) * key_stride
    src_value_idx = token_idx.to(tl.int64) * value_stride

    tgt_idx = block_idx * block_stride + block_offset * page_stride

    key_load = tl.load(key_ptr + src_key_idx + tile_pos, mask=tile_pos < (num_heads * head_size))
    tl.store(key_cache_ptr + tgt_idx + tile_pos, key_load,
             mask=tile_pos < (num_heads * head_size))

    value_load = tl.load(value_ptr + src_value_idx + tile_pos,
                         mask=tile_pos < (num_heads * head_size))
    tl.store(value_cache_ptr + tgt_idx + tile_pos, value_load,
             mask=tile_pos < (num_heads * head_size))


@triton.jit
def reshape_and_cache_kernel(
    key_ptr,  # [num_tokens, num_heads, head_size]
    value_ptr,  # [num_tokens, num_heads, head_size]
    key_cache_ptr,  # [num_blocks, block_size, num_heads, head_size]
    value_cache_ptr,  # [num_blocks, block_size, num_heads, head_size]
    slot_mapping_ptr,  # [num_tokens]
    key_stride: tl.int64,
    value_stride: tl.int64,
    block_stride: tl.int64,
    page_stride: tl.int64,
    num_heads: tl.constexpr,
    head_size: tl.constexpr,
    block_size: tl.constexpr,
    TILE_SIZE: tl.constexpr,
):
    token_idx = tl.program_id(axis=0)
    slot_idx = tl.load(slot_mapping_ptr + token_idx).to(tl.int64)
    tile_i = tl.program_id(axis=1)
    tile_pos = tile_i * TILE_SIZE + tl.arange(0, TILE_SIZE)
    # a padding token (slot < 0) stores nothing
    mask = (tile_pos < num_heads * head_size) & (slot_idx >= 0)

    block_idx = slot_idx // block_size
    block_offset = slot_idx % block_size
    tgt_idx = block_idx * block_stride + block_offset * page_stride

    key = tl.load(key_ptr + token_idx.to(tl.int64) * key_stride + tile_pos, mask=mask)
    tl.store(key_cache_ptr + tgt_idx + tile_pos, key, mask=mask)
    value = tl.load(value_ptr + token_idx.to(tl.int64) * value_stride + tile_pos, mask=mask)
    tl.store(value_cache_ptr + tgt_idx + tile_pos, value, mask=mask)
