"""The data sets of ``onlinelearn reproduce label-ranking`` (no heavy import: the command line
lists them in its --help)."""

#: name -> whether the set is multi-label
DATASETS = {"enron": True, "blogcatalog": True, "20news": False}
MULTI_LABEL = tuple(k for k, v in DATASETS.items() if v)
#: --quick: the first rows of each set
QUICK_ROWS = {"enron": 600, "blogcatalog": 2000, "20news": 3000}
