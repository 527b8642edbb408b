# Stands in for a missing torch: importing it fails as when it is not installed.
raise ModuleNotFoundError("No module named 'torch'", name="torch")
