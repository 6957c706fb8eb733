# "Solve the break-even point of the cost model and show the working."
import sympy as sp

q, p, c, f = sp.symbols("q p c f", positive=True)
profit = p * q - (c * q + f)
q_star = sp.solve(sp.Eq(profit, 0), q)[0]
values = {p: 12, c: 7, f: 1500}
with open("/work/out/breakeven.txt", "w") as out:
    out.write(f"profit(q) = {profit}\n")
    out.write(f"d profit / dq = {sp.diff(profit, q)}\n")
    out.write(f"break-even q* = {q_star}\n")
    out.write(f"with {values}: q* = {q_star.subs(values)}\n")
    out.write(sp.pretty(q_star, use_unicode=True) + "\n")
print(q_star.subs(values))
