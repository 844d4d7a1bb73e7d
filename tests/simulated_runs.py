"""The engine's own runs written as hopsim JSON: the files calibration tests fit, where
the truth is known."""
import hopsim


def write_run(folder, name, platform, workload, **params) -> str:
    """hopsim.simulate(platform, workload, **params) written to folder/name; its path."""
    path = folder / name
    path.write_text(hopsim.simulate(platform, workload, **params).to_json() + "\n")
    return str(path)
