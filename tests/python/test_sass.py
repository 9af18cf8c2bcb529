"""metile.sass: the SASS instruction mix (issue 33). The parser is checked on disassembler
output of the two formats; the round trip PTX -> ptxas -> nvdisasm/cuobjdump runs where the
tools are installed and is skipped, with the reason, where they are not."""

import pytest

from metile import sass

# nvdisasm -c of a small sm_90 kernel (ptxas 13.0): a predicated load, a vector load, an FFMA,
# a butterfly shuffle, a barrier and a store.
NVDISASM = """
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0030*/                   S2R R0, SR_TID.X ;
.L_x_1:
        /*0050*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0058*/               @P0 LDG.E R8, desc[UR4][R2.64] ;
        /*0060*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0080*/                   FFMA R5, R5, R6, R7 ;
        /*0088*/                   SHFL.BFLY PT, R9, R5, 0x10, 0x1f ;
        /*0089*/                   MUFU.EX2 R9, R9 ;
        /*0090*/              @!P0 EXIT ;
        /*00a0*/                   STG.E.64 desc[UR4][R2.64], R4 ;
        /*00b0*/                   STS.U16 [R0], R5 ;
        /*00c0*/                   BRA `(.L_x_0);
        /*00d0*/                   NOP;
"""
# cuobjdump -sass prints the same instructions with their encodings beside them.
CUOBJDUMP = """
        /*0050*/                   LDG.E.128 R4, desc[UR4][R2.64] ;           /* 0x0000000402047981 */
                                                                              /* 0x000ea8000c1e1d00 */
        /*0080*/                   FFMA R5, R5, R6, R7 ;                      /* 0x0000000605057223 */
"""


def test_counts_the_instructions_that_matter():
    mix = sass.instruction_mix(NVDISASM)
    assert mix["LDG.128"] == 1 and mix["LDG.32"] == 1
    assert mix["STG.64"] == 1 and mix["STS.16"] == 1
    assert mix["FFMA"] == 1 and mix["MUFU.EX2"] == 1
    assert mix["SHFL.BFLY"] == 1 and mix["BAR"] == 1
    assert mix["instructions"] == 12  # NOP is padding, not counted
    assert mix["opcodes"]["EXIT"] == 1 and "NOP" not in mix["opcodes"]


def test_reads_cuobjdump_format_too():
    mix = sass.instruction_mix(CUOBJDUMP)
    assert mix == {"FFMA": 1, "LDG.128": 1, "instructions": 2,
                   "opcodes": {"FFMA": 1, "LDG": 1}}


def test_other_sources_have_no_mix_here():
    assert sass.source_instruction_mix("extern \"C\" __global__ void k() {}") is None


PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a; .reg .u64 %o; .reg .u32 %t; .reg .f32 %f<4>;
  ld.param.u64 %a, [p]; cvta.to.global.u64 %a, %a;
  mov.u32 %t, %tid.x; mul.wide.u32 %o, %t, 16; add.u64 %a, %a, %o;
  ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%a];
  fma.rn.f32 %f0, %f1, %f2, %f3;
  shfl.sync.bfly.b32 %f1, %f0, 16, 0x1f, 0xffffffff;
  add.f32 %f0, %f0, %f1;
  bar.sync 0;
  st.global.f32 [%a], %f0;
  ret;
}
"""


# Each thread reads its own 16 bytes: a value that is the same in every lane would let ptxas
# drop the shuffle as an identity.
def test_ptxas_and_a_disassembler_round_trip():
    if not sass.find_tool("ptxas"):
        pytest.skip("ptxas not installed")
    if not (sass.find_tool("nvdisasm") or sass.find_tool("cuobjdump")):
        pytest.skip("neither nvdisasm nor cuobjdump is installed")
    mix = sass.instruction_mix(sass.sass_of_ptx(PTX))
    assert mix["LDG.128"] == 1
    assert mix["STG.32"] == 1
    assert mix["FFMA"] == 1
    assert mix["SHFL.BFLY"] == 1
    assert mix["BAR"] == 1
