"""Numpy statements of the players' compiled kernels, one module per concept of :mod:`agents`.

Each kernel computes exactly what a readable numpy statement here computes; the tests compare the two decision by
decision (random numbers included). Production code does not import this package.
"""
