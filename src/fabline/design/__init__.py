"""Fabric design: sizing a rail-optimized Clos, the design file, rendering configs, intended state."""
