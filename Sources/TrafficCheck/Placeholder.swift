// Baselines, budgets and checks: see TrafficBaseline.
