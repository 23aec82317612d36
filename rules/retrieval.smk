# Encoding every text set once per model (through the embedding cache), search, and renormalization means.


rule encode_texts:
    input:
        texts=encode_texts_input,
    output:
        embeddings=f"{RESULTS}/embeddings/{{model}}/{{text_set}}/{{kind}}.npy",
        ids=f"{RESULTS}/embeddings/{{model}}/{{text_set}}/{{kind}}.ids.tsv",
    log:
        f"{RESULTS}/logs/encode_texts/{{model}}/{{text_set}}/{{kind}}.log",
    benchmark:
        f"{RESULTS}/timing/encode_texts/{{model}}/{{text_set}}/{{kind}}.tsv"
    conda:
        "../envs/retrieval.yaml"
    # One thread per job: two encode jobs on two cores beat one job on both, and torch slows
    # down badly when its threads share a core with another process.
    threads: 1
    resources:
        mem_mb=config_value("models/{model}/mem_mb"),
        gpu=encode_gpu,
        runtime=240,
    params:
        model=config_value("models/{model}"),
        cache=EMBEDDING_CACHE,
    script:
        "../scripts/encode_texts.py"


rule retrieve:
    input:
        unpack(retrieve_inputs),
    output:
        run=f"{RESULTS}/runs/{{benchmark}}/{{model}}/{{setting}}.trec",
    log:
        f"{RESULTS}/logs/retrieve/{{benchmark}}/{{model}}/{{setting}}.log",
    benchmark:
        f"{RESULTS}/timing/retrieve/{{benchmark}}/{{model}}/{{setting}}.tsv"
    wildcard_constraints:
        model=names_regex(config["models"]),
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    resources:
        mem_mb=retrieve_mem_mb,
        runtime=60,
    params:
        model=config_value("models/{model}"),
        top_k=config["retrieval"]["top_k"],
        corpus_languages=corpus_languages_of,
        id_prefixes=corpus_id_prefixes,
        embedding_model=embedding_model_of,
    script:
        "../scripts/retrieve.py"


rule estimate_renorm_mean:
    input:
        embeddings=f"{RESULTS}/embeddings/{{model}}/{{collection}}/corpus.npy",
    output:
        mean=f"{RESULTS}/embeddings/{{model}}/{{collection}}/corpus.mean.npy",
        provenance=f"{RESULTS}/embeddings/{{model}}/{{collection}}/corpus.mean.json",
    log:
        f"{RESULTS}/logs/estimate_renorm_mean/{{model}}/{{collection}}.log",
    conda:
        "../envs/retrieval.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/estimate_renorm_mean.py"
