"""Which numba functions a kernel calls, and for which signatures, by numba's type inference alone (nothing
compiled): :func:`typed_call_tree`. Why typing, not the dispatchers' compiled versions: a kernel loaded from the
cache compiles none of its callees, so their versions say nothing on a warm cache; typing sees every call site."""

from __future__ import annotations

from numba.core import compiler, ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.registry import cpu_target
from numba.core.typed_passes import NopythonTypeInference


@register_pass(mutates_CFG=False, analysis_only=True)
class _StopAfterTyping(FunctionPass):
    """Ends numba's pipeline after type inference, handing back what it typed (typemap, calltypes, IR)."""

    _name = "cluedo_stop_after_typing"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        raise compiler._EarlyPipelineCompletion((state.typemap, state.calltypes, state.func_ir))


class _TypeOnly(compiler.CompilerBase):
    """numba's untyped passes and type inference, nothing lowered."""

    def define_pipelines(self):
        pm = compiler.DefaultPassBuilder.define_untyped_pipeline(self.state)
        pm.add_pass(NopythonTypeInference, "nopython type inference")
        pm.add_pass(_StopAfterTyping, "stop after typing")
        pm.finalize()
        return [pm]


def typed_call_tree(dispatcher, signature, found=None):
    """Every numba function ``dispatcher`` (for ``signature``) calls, directly or not, with the signatures numba
    types those calls for: {dispatcher: set of signatures}. Typing only, so it is cheap on a warm cache and sees
    every call site whether or not the caller was loaded from the cache (a cached caller types none of its
    callees)."""
    found = {} if found is None else found
    typemap, calltypes, func_ir = compiler.compile_extra(
        cpu_target.typing_context, cpu_target.target_context, dispatcher.py_func, signature, None,
        compiler.Flags(), {}, pipeline_class=_TypeOnly,
    )  # fmt: skip
    for block in func_ir.blocks.values():
        for inst in block.body:
            if isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Expr) and inst.value.op == "call":
                callee = typemap.get(inst.value.func.name)
                if isinstance(callee, types.Dispatcher):
                    args = calltypes[inst.value].args
                    if args not in found.setdefault(callee.dispatcher, set()):
                        found[callee.dispatcher].add(args)
                        typed_call_tree(callee.dispatcher, args, found)
    return found
