"""torch.library as torch 1.13 has it: Library, but no custom_op (torch 2.4)."""


class Library:
    def __init__(self, ns, kind, dispatch_key=""):
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
