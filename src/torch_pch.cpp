// Compiled once to build the shared precompiled header (torch_pch.hpp) of the torch areas.
