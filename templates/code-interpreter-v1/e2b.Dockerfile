# code-interpreter-v1: the template @e2b/code-interpreter's Sandbox.create() asks for.
# Built from Debian 12's own packages on the platform's `base`; no registry image is needed.
# Install it with `x template install code-interpreter-v1`. To extend it, start your own
# Dockerfile with `FROM code-interpreter-v1` and build it with `x template build`.
FROM base

# Python's Jupyter kernel (ipykernel) with the data stack the SDK's users expect
RUN apt-get update && \
    apt-get install -y --no-install-recommends \
      python3-ipykernel python3-jupyter-client python3-matplotlib-inline \
      python3-numpy python3-pandas python3-scipy python3-matplotlib python3-seaborn \
      python3-plotly python3-sklearn python3-pil python3-requests python3-bs4 python3-openpyxl \
      python-is-python3 fonts-dejavu-core && \
    rm -rf /var/lib/apt/lists/*

# R's Jupyter kernel (IRkernel), with the kernel spec IRkernel::installspec() would write
RUN apt-get update && \
    apt-get install -y --no-install-recommends r-base-core r-cran-irkernel && \
    rm -rf /var/lib/apt/lists/* && \
    mkdir -p /usr/local/share/jupyter/kernels/ir && \
    echo '{"argv": ["R", "--slave", "-e", "IRkernel::main()", "--args", "{connection_file}"], "display_name": "R", "language": "R"}' \
      > /usr/local/share/jupyter/kernels/ir/kernel.json

# Java: JShell, under the interpreter's own kernel
RUN apt-get update && \
    apt-get install -y --no-install-recommends openjdk-17-jdk-headless && \
    rm -rf /var/lib/apt/lists/*

# The interpreter: @e2b/code-interpreter's wire on port 49999 (packages/code-interpreter)
COPY code-interpreter /usr/local/lib/x-code-interpreter
RUN javac -d /usr/local/lib/x-code-interpreter/java /usr/local/lib/x-code-interpreter/java/JShellKernel.java && \
    python3 -m compileall -q /usr/local/lib/x-code-interpreter/python && \
    python3 -c 'import matplotlib.pyplot, pandas, numpy'

USER user
WORKDIR /home/user
# kernels run as root, as E2B's do; the ready command waits for the default contexts
CMD sudo /usr/local/bin/node /usr/local/lib/x-code-interpreter/server.cjs
