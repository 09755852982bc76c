"""Runs inside the throw-away ZigZag venv (not magnet's environment): one network on one of
ZigZag's own example accelerators through ZigZag's public API, and prints one JSON line.

    python zigzag_driver.py MODEL.onnx ACCELERATOR.yaml MAPPING.yaml OPT DUMP_FOLDER
"""

from __future__ import annotations

import json
import logging
import resource
import sys
import time


def main() -> None:
    model_path, accelerator, mapping, opt, dump = sys.argv[1:6]
    import onnx
    from zigzag.api import get_hardware_performance_zigzag

    logging.disable(logging.INFO)  # ZigZag logs every layer at INFO
    # the bundled models carry no external weight files: load the graph only
    model = onnx.load(model_path, load_external_data=False)
    wall = time.perf_counter()
    cpu = time.process_time()
    energy, latency, cmes = get_hardware_performance_zigzag(
        model,
        accelerator,
        mapping,
        opt=opt,
        dump_folder=dump,
        pickle_filename=f"{dump}/cmes.pickle",
        loma_show_progress_bar=False,
    )
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - wall
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    # [(the summed result, [(one layer's best result, extra), ...])]
    layers = [item[0] if isinstance(item, tuple) else item for item in cmes[0][1]]
    macs = sum(int(getattr(getattr(cme, "layer", None), "total_mac_count", 0)) for cme in layers)
    print(
        json.dumps(
            {
                "energy_pj": float(energy),
                "latency_cycles": float(latency),
                "layers": len(layers),
                "macs": macs,
                "cpu_s": cpu + kids.ru_utime + kids.ru_stime,
                "wall_s": wall,
            }
        )
    )


if __name__ == "__main__":
    main()
