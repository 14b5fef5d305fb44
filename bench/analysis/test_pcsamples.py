"""Tests of pcsamples: PC samples joined with a cubin's line table.

    python3 -m unittest discover -s bench/analysis -p test_pcsamples.py -v
"""

from __future__ import annotations

import unittest

import pcsamples

DISASSEMBLY = """\
        /*0000*/                   MOV R1, c[0x0][0x28] ;
\t//## File "/src/ringkernel/device/mailbox.h", line 336 inlined at "/src/ringkernel/device/rt_worker.cuh", line 252
\t//## File "/src/ringkernel/device/rt_worker.cuh", line 252 inlined at "/src/rk_program.cu", line 701
\t//## File "/src/rk_program.cu", line 701
        /*0010*/                   LD.E.64.STRONG.GPU R6, desc[UR6][R6.64] ;
        /*0020*/                   ISETP.NE.AND P0, PT, R6, R7, PT ;
\t//## File "/src/ringkernel/device/rt_worker.cuh", line 895 inlined at "/src/ringkernel/device/runtime.cuh", line 45
\t//## File "/src/ringkernel/device/runtime.cuh", line 45 inlined at "/src/rk_program.cu", line 701
        /*0030*/                   NANOSLEEP 0x4e20 ;
"""


def row(pc: int, reason: str, n: int) -> dict:
    return {"cubin_crc": "1", "function": "rk_system_kernel", "pc_offset": str(pc),
            "stall_reason": "smsp__pcsamp_warps_issue_stalled_" + reason, "samples": str(n)}


class PcSamplesTest(unittest.TestCase):
    def test_each_instruction_gets_its_innermost_line_and_caller(self):
        code = pcsamples.read_disassembly(DISASSEMBLY.splitlines())
        self.assertEqual(code[0x10], ("LD.E.64.STRONG.GPU R6, desc[UR6][R6.64]", "mailbox.h:336", "rt_worker.cuh:252"))
        # The next instruction without a comment block keeps the location.
        self.assertEqual(code[0x20][1:], ("mailbox.h:336", "rt_worker.cuh:252"))
        self.assertEqual(code[0x30][1:], ("rt_worker.cuh:895", "runtime.cuh:45"))
        self.assertNotIn(0x40, code)

    def test_not_issued_halves_are_not_counted_twice_and_sleep_is_left_out(self):
        p = pcsamples.read_samples([
            row(0x20, "long_scoreboard", 10), row(0x20, "long_scoreboard_not_issued", 10),
            row(0x10, "wait", 3), row(0x30, "sleeping", 50), row(0x30, "sleeping_not_issued", 50),
        ])
        self.assertEqual(p.total, 13)
        self.assertEqual(p.by_reason, {"long_scoreboard": 10, "wait": 3})
        self.assertEqual(p.skipped, {"sleeping": 50})
        code = pcsamples.read_disassembly(DISASSEMBLY.splitlines())
        self.assertEqual(p.lines(code), {"mailbox.h:336 (in rt_worker.cuh:252)": 13})

    def test_nothing_is_skipped_when_asked(self):
        p = pcsamples.read_samples([row(0x30, "sleeping", 5), row(0x30, "barrier", 2)], skip=())
        self.assertEqual(p.total, 7)


if __name__ == "__main__":
    unittest.main()
