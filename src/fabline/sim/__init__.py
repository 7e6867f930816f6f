"""The simulated RoCE fabric: every device of a fabric description served over real SSH.

``run_simulator(fabric, faults)`` starts it in a background thread; outputs are each platform's
real formats rendered from the fabric's device states (see ``docs/simulator.md``).
"""

from fabline.sim.faults import RisingCounter
from fabline.sim.server import Simulator, TransportFault, run_simulator

__all__ = ["RisingCounter", "Simulator", "TransportFault", "run_simulator"]
