"""Question sets and their gold: loaders, gold sections, evidence mapping, the reference logs, the FinanceBench shelf."""
