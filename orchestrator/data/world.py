"""The embedded world: scenes from latent factors, captions from a grammar, fixed image encoders.

A testbed that needs no download, not evidence about real models. A scene holds one or two
objects (shape, colour, size, count), a spatial relation between them, and a setting. Captions
mention a random subset of those factors with synonyms and varied word order. Two "image"
encoders play the reference's part: `render_cnn` renders the scene to a 16x16 RGB picture and
runs a fixed random conv net over it (the DINOv2 stand-in); `factor_mlp` maps the factor one-hots
through a fixed random MLP with per-scene nuisance (the CLIP stand-in).

Everything is a function of (world seed, stream, index): the same seed gives the same scenes,
captions and features on any machine, because all randomness comes from numpy's PCG64 streams.
"""

from dataclasses import dataclass

import numpy as np

from orchestrator.data.tokenizer import SPECIALS
from orchestrator.sweepfile import DataConfig
from orchestrator.sweepfile.catalog import WORLD_REFERENCES, Objective

__all__ = ["REFERENCES", "Captioner", "Knobs", "Scene", "World", "vocabulary"]

SHAPES = ("circle", "square", "triangle", "star", "cross", "ring", "heart", "arrow")
COLOURS = ("red", "green", "blue", "yellow", "purple", "orange", "white", "black")
SIZES = ("small", "medium", "large")
COUNTS = ("one", "two", "three", "four")
RELATIONS = ("left", "right", "above", "below")
SETTINGS = ("beach", "forest", "city", "desert", "kitchen", "snow")
FACTORS = {"shape": SHAPES, "colour": COLOURS, "size": SIZES, "count": COUNTS}
FACTORS |= {"relation": RELATIONS, "setting": SETTINGS}
FILLER = ("a", "the", "there", "is", "are", "in", "on", "with", "and", "of", "near", "by")
NUISANCE_WORDS = 256  # chatter tokens that say nothing about the scene
RGB = np.array(
    [[1, 0, 0], [0, 0.8, 0], [0, 0, 1], [1, 1, 0], [0.6, 0, 0.8], [1, 0.5, 0], [1, 1, 1], [0, 0, 0]]
)
SETTING_TINT = np.array(
    [
        [0.9, 0.8, 0.5],
        [0.1, 0.4, 0.1],
        [0.5, 0.5, 0.55],
        [0.8, 0.6, 0.3],
        [0.7, 0.7, 0.6],
        [1, 1, 1],
    ]
)
REFERENCES = WORLD_REFERENCES
FEATURE_WIDTH = 128
STREAM_TRAIN, STREAM_EVAL, STREAM_RETRIEVAL, STREAM_ENCODER = 1, 2, 3, 4
BLOCK = 4096


@dataclass(frozen=True)
class Knobs:
    """How text relates to a scene. Each enters the trial key (through the sweep's data section).

    synonyms: surface forms per factor value (one value, several unrelated words), so that a word
        is not a factor: a random-init bag of words cannot match scenes by shared words.
    nuisance: mean count of chatter words per caption, drawn from NUISANCE_WORDS tokens that carry
        no scene information, so raw word overlap between captions is mostly noise.
    mention: the chance a caption names each factor of an object or the scene.
    """

    synonyms: int
    nuisance: float
    mention: float

    @classmethod
    def of(cls, data: DataConfig) -> "Knobs":
        """The knobs a sweep's data section sets (their defaults live in `DataConfig`)."""
        return cls(data.world_synonyms, data.world_nuisance, data.world_mention)


def forms(word: str, synonyms: int) -> tuple[str, ...]:
    """The surface forms of one factor value: the word, then word2, word3, ..."""
    return (word, *(f"{word}{j}" for j in range(2, synonyms + 1)))


def vocabulary(knobs: Knobs) -> tuple[str, ...]:
    words: list[str] = [*SPECIALS, *FILLER]
    for values in FACTORS.values():
        for value in values:
            words += forms(value, knobs.synonyms)
    words += [form + "s" for shape in SHAPES for form in forms(shape, knobs.synonyms)]  # plurals
    words += [f"x{i}" for i in range(NUISANCE_WORDS)]
    return tuple(dict.fromkeys(words))


@dataclass(frozen=True)
class Scene:
    """Objects as rows of (shape, colour, size, count); relation -1 when there is one object."""

    objects: tuple[tuple[int, int, int, int], ...]
    relation: int
    setting: int


def _random_scene(rng: np.random.Generator) -> Scene:
    n_objects = 1 + int(rng.random() < 0.5)
    objects = tuple(
        (
            int(rng.integers(len(SHAPES))),
            int(rng.integers(len(COLOURS))),
            int(rng.integers(len(SIZES))),
            int(rng.integers(len(COUNTS))),
        )
        for _ in range(n_objects)
    )
    relation = int(rng.integers(len(RELATIONS))) if n_objects == 2 else -1
    return Scene(objects, relation, int(rng.integers(len(SETTINGS))))


def _same_topic(scene: Scene, rng: np.random.Generator) -> Scene:
    """Another scene of the same document: its setting (the topic) and nothing else survives."""
    fresh = _random_scene(rng)
    return Scene(fresh.objects, fresh.relation, scene.setting)


class Captioner:
    """Captions of scenes under the world's knobs: a random subset of factors, each through one of
    its synonyms, in one of a few word orders, with chatter words mixed in."""

    def __init__(self, knobs: Knobs) -> None:
        self.knobs = knobs

    def _word(self, rng: np.random.Generator, value: str, plural: bool = False) -> str:
        word = forms(value, self.knobs.synonyms)[int(rng.integers(self.knobs.synonyms))]
        return word + "s" if plural else word

    def _object(self, obj: tuple[int, ...], rng: np.random.Generator) -> list[str]:
        shape, colour, size, count = obj
        said = rng.random(3) < self.knobs.mention
        words = [self._word(rng, COUNTS[count]) if said[0] else "a"]
        if said[1]:
            words.append(self._word(rng, SIZES[size]))
        if said[2]:
            words.append(self._word(rng, COLOURS[colour]))
        words.append(self._word(rng, SHAPES[shape], plural=bool(said[0]) and count > 0))
        return words

    def __call__(self, scene: Scene, rng: np.random.Generator) -> str:
        parts = [self._object(obj, rng) for obj in scene.objects]
        if len(parts) == 2 and rng.random() < 0.5:
            parts.reverse()
        words = parts[0]
        if len(parts) == 2:
            link = [self._word(rng, RELATIONS[scene.relation]), "of"]
            words = words + (link if rng.random() < self.knobs.mention else ["and"]) + parts[1]
        if rng.random() < self.knobs.mention:
            place = ["in", "the", self._word(rng, SETTINGS[scene.setting])]
            words = place + words if rng.random() < 0.5 else words + place
        for _ in range(rng.poisson(self.knobs.nuisance)):
            words.insert(int(rng.integers(len(words) + 1)), f"x{int(rng.integers(NUISANCE_WORDS))}")
        return " ".join(words)


def factor_onehots(scenes: list[Scene]) -> np.ndarray:
    """(n, F) one-hot factors; a missing second object is all zeros."""
    widths = [len(SHAPES), len(COLOURS), len(SIZES), len(COUNTS)]
    per_object = sum(widths)
    out = np.zeros((len(scenes), 2 * per_object + len(RELATIONS) + len(SETTINGS)), np.float64)
    for row, scene in enumerate(scenes):
        for index, obj in enumerate(scene.objects):
            offset = index * per_object
            for value, width in zip(obj, widths, strict=True):
                out[row, offset + value] = 1.0
                offset += width
        if scene.relation >= 0:
            out[row, 2 * per_object + scene.relation] = 1.0
        out[row, 2 * per_object + len(RELATIONS) + scene.setting] = 1.0
    return out


def render(scenes: list[Scene], rng: np.random.Generator) -> np.ndarray:
    """(n, 3, 16, 16) pictures: a tinted background, a blob per object placed by the relation."""
    images = np.empty((len(scenes), 3, 16, 16))
    yy, xx = np.mgrid[0:16, 0:16]
    anchors = {-1: [(8, 8)], 0: [(8, 4), (8, 12)], 1: [(8, 12), (8, 4)]}
    anchors |= {2: [(4, 8), (12, 8)], 3: [(12, 8), (4, 8)]}
    for row, scene in enumerate(scenes):
        image = SETTING_TINT[scene.setting][:, None, None] * np.ones((3, 16, 16))
        for (cy, cx), (shape, colour, size, count) in zip(
            anchors[scene.relation], scene.objects, strict=False
        ):
            radius = 1.5 + size + 0.3 * count
            distance = np.hypot(yy - cy - rng.normal(0, 0.7), xx - cx - rng.normal(0, 0.7))
            profile = np.cos(distance * (1 + shape % 4) / radius) if shape >= 4 else 1.0
            mask = (distance < radius) * profile
            image = image * (1 - np.abs(mask)) + RGB[colour][:, None, None] * mask
        images[row] = image + rng.normal(0, 0.05, image.shape)
    return images


class World:
    """Scenes, captions, documents and reference features, all reproducible from `seed`."""

    def __init__(self, seed: int, knobs: Knobs) -> None:
        self.seed = seed
        self.knobs = knobs
        self.caption = Captioner(knobs)
        self.words = vocabulary(knobs)
        self.index = {word: i for i, word in enumerate(self.words)}
        weights = np.random.default_rng([seed, STREAM_ENCODER])
        factor_width = factor_onehots([_random_scene(weights)]).shape[1]
        self._mlp = (
            weights.normal(0, 1 / np.sqrt(factor_width), (factor_width, 256)),
            weights.normal(0, 1 / np.sqrt(256), (256, FEATURE_WIDTH)),
        )
        self._conv = (
            weights.normal(0, 1 / np.sqrt(27), (16, 3, 3, 3)),
            weights.normal(0, 1 / np.sqrt(144), (32, 16, 3, 3)),
            weights.normal(0, 1 / np.sqrt(32 * 16), (32 * 16, FEATURE_WIDTH)),
        )

    def tokens(self, text: str) -> list[int]:
        return [self.index[word] for word in text.split()]

    def _block_rng(self, stream: int, block: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, stream, block])

    def scenes(self, stream: int, start: int, count: int) -> list[Scene]:
        out: list[Scene] = []
        for block in range(start // BLOCK, (start + count - 1) // BLOCK + 1):
            rng = self._block_rng(stream, block)
            scenes = [_random_scene(rng) for _ in range(BLOCK)]
            low = max(start - block * BLOCK, 0)
            out += scenes[low : min(start + count - block * BLOCK, BLOCK)]
        return out

    def training_texts(self, objective: Objective, start: int, count: int) -> list[tuple[str, str]]:
        """Example i of the training stream as two texts: captions of one scene (good views)
        or two chunks of one drifting document (bad views); NTP reads the good pair joined."""
        scenes = self.scenes(STREAM_TRAIN, start, count)
        out = []
        for offset, scene in enumerate(scenes):
            rng = np.random.default_rng([self.seed, STREAM_TRAIN, start + offset, 1])
            other = _same_topic(scene, rng) if objective.documents else scene
            out.append((self.caption(scene, rng), self.caption(other, rng)))
        return out

    def eval_set(self, stream: int, count: int) -> tuple[list[str], dict[str, np.ndarray]]:
        """`count` held-out scenes with one caption each and every reference's features."""
        scenes = self.scenes(stream, 0, count)
        rng = np.random.default_rng([self.seed, stream, 2**32 - 1])
        texts = [self.caption(scene, rng) for scene in scenes]
        return texts, self.reference_features(scenes, rng)

    def reference_features(self, scenes: list[Scene], rng: np.random.Generator) -> dict[str, np.ndarray]:
        factors = factor_onehots(scenes)
        nuisance = rng.normal(0, 0.3, factors.shape)
        w1, w2 = self._mlp
        factor_mlp = np.tanh((factors + nuisance * factors) @ w1) @ w2
        return {"render_cnn": self._conv_features(render(scenes, rng)), "factor_mlp": factor_mlp}

    def _conv_features(self, images: np.ndarray) -> np.ndarray:
        c1, c2, head = self._conv
        hidden = np.maximum(_conv3x3(images, c1), 0)  # (n, 16, 16, 16)
        hidden = hidden.reshape(len(images), 16, 8, 2, 8, 2).mean(axis=(3, 5))  # (n, 16, 8, 8)
        hidden = np.maximum(_conv3x3(hidden, c2), 0)  # (n, 32, 8, 8)
        hidden = hidden.reshape(len(images), 32, 4, 2, 4, 2).mean(axis=(3, 5))  # (n, 32, 4, 4)
        return np.tanh(hidden.reshape(len(images), -1) @ head)


def _conv3x3(images: np.ndarray, kernels: np.ndarray) -> np.ndarray:
    """'same' 3x3 convolution: (n, c, h, w) with (o, c, 3, 3) -> (n, o, h, w)."""
    padded = np.pad(images, ((0, 0), (0, 0), (1, 1), (1, 1)))
    h, w = images.shape[2:]
    patches = np.stack(
        [padded[:, :, dy : dy + h, dx : dx + w] for dy in range(3) for dx in range(3)], axis=2
    )  # (n, c, 9, h, w)
    return np.einsum("ncphw,ocp->nohw", patches, kernels.reshape(*kernels.shape[:2], 9))
