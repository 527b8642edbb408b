# Stands in for a missing cupy: importing it fails as when it is not installed.
raise ModuleNotFoundError("No module named 'cupy'", name="cupy")
