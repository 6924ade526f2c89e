"""升级 / 拖拉机 (Shengji / Tractor): the second game of the referee. Pure Python, no I/O."""
