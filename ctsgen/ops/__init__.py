"""Single-operation semantics that several families share: the expected result of one
instruction (a load or store through a tensor layout or view, a decode load, a reduction, a
conversion, a per-element function, a matrix multiply, a cooperative-vector matrix multiply or
element-wise operation), its parameter word format and its data helpers.

A family imports these from here, the family that tests the operation on its own as well as
the program families that compose it, so each operation has one home. Nothing here imports a
family (tests/test_structure.py)."""
