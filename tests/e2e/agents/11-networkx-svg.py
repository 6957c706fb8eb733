# "Draw who ships to whom as a graph."
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import networkx as nx

g = nx.DiGraph()
g.add_weighted_edges_from([("depot", "north", 120), ("depot", "south", 80),
                           ("depot", "east", 300), ("north", "west", 45),
                           ("east", "south", 60)])
pos = nx.spring_layout(g, seed=7)
fig, ax = plt.subplots(figsize=(5, 4))
nx.draw_networkx(g, pos, ax=ax, node_color="#88ccee", arrows=True)
nx.draw_networkx_edge_labels(g, pos, edge_labels=nx.get_edge_attributes(g, "weight"), ax=ax)
ax.set_axis_off()
fig.savefig("/work/out/shipping.svg", format="svg")
print("nodes:", g.number_of_nodes(), "edges:", g.number_of_edges())
