"""The sinusoidal family, one concern per module:

    family.py              the Family: parameters, checks, exact rows, show's facts (interface)
    conventions.py         where sin and cos go (CONVENTIONS), each layout drawn
    timesteps.py           --timesteps (a range, list or file) and diffusion timestep tables
    seeds.py               the seed notebooks' formulas, op for op
    libraries.py           each library's table in its own arithmetic
    fit.py                 what a table's angles say (layout, base, offset): compare's finding
    identify.py            compare FILE's candidates: conventions, seeds, libraries
    identify_timesteps.py  timestep tables read back at a scheduler's timesteps

Building a table never imports the identify modules; families/readers.py registers them.
"""

from .family import FAMILY

__all__ = ["FAMILY"]
