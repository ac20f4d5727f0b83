"""Kernels: structured programs over cooperative matrices, shaped like the shaders that use them.

One representation (:mod:`ctsgen.kernel.ir`), its meaning (:mod:`ctsgen.kernel.evaluate`: the oracle
and the reference execution, vectorised over the subgroups of a workgroup; exact-domain bounds by
abstract interpretation) and its emitters (:mod:`ctsgen.kernel.glsl`), kept apart, so a second front
end adds an emitter and changes no meaning. A family says which constructs it draws
(:class:`ctsgen.kernel.ir.Constructs`); it does not re-implement them. docs/architecture.md, "Kernels".
"""
