// An empty translation unit for libraries whose sources are not written yet.
