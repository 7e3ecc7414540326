# Building a sequence element by element, mapping and folding it.
n = 1000000
s = []
for i in range(n):
    s.append((i * 31) % 1000)
doubled = [2 * x for x in s]
total = 0
for x in doubled:
    total += x
evens = 0
for x in doubled:
    if x % 4 == 0:
        evens += 1
print(total, evens)
