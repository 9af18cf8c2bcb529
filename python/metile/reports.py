"""What compiled kernels and prepared dispatches report (seed 002, "Inspect the materialized
kernel"): schedule_plan (plan_schedule's decisions and reasons, immutable), execution_report
(the plan plus what lowering materialised) and explain() (the report as formatted JSON).
"""

import json
import types


def _frozen(value):
    if isinstance(value, dict):
        return types.MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


class Reports:
    """The reports of `self._reported`, a _core.CompiledKernel."""

    @property
    def schedule_plan(self):
        """plan_schedule's pre-lowering decisions with their reasons: backend (and the
        target's strategy for it), geometry, staging, vector_width, double_buffer and the
        requested Schedule. A read-only mapping."""
        return _frozen(json.loads(self._reported.schedule_plan_json))

    @property
    def execution_report(self):
        """What the compiler did: the schedule plan, geometry, allocations, passes, loops,
        buffering and fused epilogues (a dict)."""
        return json.loads(self._reported.report_json)

    def explain(self):
        """The execution report as formatted JSON text; for a PTX-route kernel (Schedule(
        route="ptx")) where ptxas and nvdisasm or cuobjdump are installed, with the SASS
        instruction mix ptxas makes of it (metile.sass)."""
        report = self.execution_report
        source = getattr(self._reported, "source", None)
        if isinstance(source, str):
            from . import sass
            mix = sass.source_instruction_mix(source)
            if mix is not None:
                report["sass_instruction_mix"] = mix
        return json.dumps(report, indent=2)


class CompiledKernel(Reports):
    """A kernel compiled for one signature (kernel.compile(...)): its source, ABI and
    reports, without arguments bound."""

    def __init__(self, compiled):
        self._compiled = self._reported = compiled

    @property
    def name(self):
        return self._compiled.name

    @property
    def source(self):
        """The emitted source (MSL; CUDA C++ on the cuda device)."""
        return self._compiled.source

    @property
    def abi(self):
        """The KernelABI as a dict (params, threads_per_threadgroup, threadgroup_bytes,
        grid_rule)."""
        return self._compiled.abi
