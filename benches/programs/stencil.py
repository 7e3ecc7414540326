# A 5-point stencil on a 300x300 grid of floats, 10 sweeps.
n = 300
a = [[1.0 if i == 0 else 0.0 for j in range(n)] for i in range(n)]
b = [row[:] for row in a]

def sweep(src, dst):
    for i in range(1, n - 1):
        for j in range(1, n - 1):
            c = src[i][j]
            u = src[i - 1][j]
            d = src[i + 1][j]
            l = src[i][j - 1]
            r = src[i][j + 1]
            dst[i][j] = 0.2 * (c + (u + (d + (l + r))))

for k in range(10):
    sweep(a, b)
    a, b = b, a
print("%.12g" % a[5][5])
