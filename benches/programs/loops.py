# A 3-deep nested loop over ints.
n = 200
acc = 0
for i in range(n):
    for j in range(n):
        for k in range(n):
            acc += (i * j + k) % 7
print(acc)
